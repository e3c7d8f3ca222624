// Implementation of tcprepro::Simulation, part 3: the applications installed on
// the nodes.
//  - FlowSender  opens one TCP socket with its own congestion control, keeps
//                its send buffer full (bulk) or writes `bytes` then closes;
//  - PoissonSender sends UDP packets at exponential intervals (a Poisson
//                packet stream of a given rate);
//  - FlowSink    (one per receiving node) accepts TCP connections and
//                receives UDP packets, counts bytes per flow and stamps the
//                completion time of sized flows.
//
// SPDX-License-Identifier: GPL-2.0-only

#include "simulation-impl.h"

#include "tcp-ack-counting.h"
#include "tcp-limited-slow-start.h"
#include "tcp-socket-karn.h"
#include "trace-state.h"

#include <algorithm>
#include <cmath>

namespace tcprepro
{

namespace
{

constexpr uint16_t kSinkPort = 9;
constexpr uint16_t kUdpSinkPort = 10;

/// The congestion state of a TCP socket, which ns-3 keeps protected: a flow's maximum
/// pacing rate is a per-socket setting (Linux's SO_MAX_PACING_RATE), while the
/// TcpSocketState attribute can only be set for every socket at once.
struct SocketStateOf : TcpSocketBase
{
    static Ptr<TcpSocketState> Get(TcpSocketBase& socket)
    {
        return socket.*(&SocketStateOf::m_tcb);
    }
};

/// Set "Name=Value|..." attributes on a TCP socket.
void
SetSocketAttributes(TcpSocketBase& socket, const std::string& attributes)
{
    for (const auto& [name, value] : ParseAttributes(attributes))
    {
        socket.SetAttribute(name, StringValue(value));
    }
}

/// FlowSpec's counting codes (0 model, 1 ACK, 2 segment) as TcpAckCounting's rules.
TcpAckCounting::Counting
AsCounting(int code)
{
    switch (code)
    {
    case 1:
        return TcpAckCounting::PER_ACK;
    case 2:
        return TcpAckCounting::PER_SEGMENT;
    default:
        return TcpAckCounting::MODEL;
    }
}

/// Host-cache key of a connection: its sending node and its destination address.
std::pair<uint32_t, uint32_t>
HostCacheKey(const FlowState& flow)
{
    return {flow.srcNodeId, flow.dstAddress.Get()};
}

} // namespace

// ----------------------------------------------------------------------------
// FlowSender

void
FlowSender::StartApplication()
{
    FlowState& flow = m_sim->flows[m_flowId];
    m_remaining = flow.spec.bytes;
    // RFC 6298's timer back-off, as every testbed stack keeps it (tcp-socket-karn.h)
    Ptr<TcpSocketBase> tcp = TcpSocketKarn::Create(GetNode()->GetObject<TcpL4Protocol>());
    m_socket = tcp;
    SetSocketAttributes(*tcp, m_sim->nodeSocketAttributes[flow.spec.src]);
    SetSocketAttributes(*tcp, flow.spec.socket_attributes);
    if (flow.spec.host_cache)
    {
        // a connection to a host the cache knows starts from the cached ssthresh
        // (FreeBSD 9.2: tcp_hc_get in cc_conn_init, at least 2 segments)
        auto entry = m_sim->hostCache.find(HostCacheKey(flow));
        if (entry != m_sim->hostCache.end() && entry->second.ssthreshBytes > 0)
        {
            UintegerValue mss;
            tcp->GetAttribute("SegmentSize", mss);
            const uint64_t seeded = std::max<uint64_t>(entry->second.ssthreshBytes, 2 * mss.Get());
            tcp->SetAttribute("InitialSlowStartThreshold", UintegerValue(seeded));
            flow.initialSsthreshBytes = static_cast<double>(seeded);
        }
    }
    ObjectFactory cc = MakeFactory(flow.spec.cc_type, flow.spec.cc_attributes);
    Ptr<TcpCongestionOps> ops = cc.Create<TcpCongestionOps>();
    flow.ccState.assign(m_sim->ccSources.size(), kNaN);
    for (std::size_t i = 0; i < m_sim->ccSources.size(); ++i)
    {
        // connected before Init() so the model's initial state is seen; a model
        // without this traced value leaves NaN
        ConnectTracedNumber(ops, m_sim->ccSources[i], [state = &flow.ccState[i]](double value) {
            *state = value;
        });
    }
    if (flow.spec.ss_counting > 0 || flow.spec.ca_counting > 0)
    {
        // what the growth counts, as the testbed's stack did (per ACK or per segment)
        auto counting = CreateObject<TcpAckCounting>();
        counting->SetAttribute("SlowStart", EnumValue(AsCounting(flow.spec.ss_counting)));
        counting->SetAttribute("CongestionAvoidance", EnumValue(AsCounting(flow.spec.ca_counting)));
        counting->SetAttribute("SlowStartLimit", UintegerValue(flow.spec.ss_ack_limit));
        counting->SetInner(ops);
        ops = counting;
    }
    if (flow.spec.max_ssthresh_pkts > 0)
    {
        // RFC 3742 limited slow start around the flow's own congestion control
        auto limited = CreateObject<TcpLimitedSlowStart>();
        limited->SetAttribute("MaxSsThresh", UintegerValue(flow.spec.max_ssthresh_pkts));
        limited->SetInner(ops);
        ops = limited;
    }
    tcp->SetCongestionControlAlgorithm(ops);
    if (flow.spec.pacing)
    {
        tcp->SetPacingStatus(true);
    }
    if (flow.spec.max_pacing_bps > 0)
    {
        // every segment after the initial window at most at this rate (Linux, with
        // SO_MAX_PACING_RATE, paces a connection from its 11th segment on)
        DataRate cap(static_cast<uint64_t>(flow.spec.max_pacing_bps));
        Ptr<TcpSocketState> state = SocketStateOf::Get(*tcp);
        state->m_maxPacingRate = cap;
        state->m_pacingRate = cap;
        tcp->SetPacingStatus(true);
    }
    PointerValue ccInUse;
    tcp->GetAttribute("CongestionOps", ccInUse);
    // report the congestion control, not its decorators
    Ptr<TcpCongestionOps> inUse =
        TcpCongestionDecorator::Innermost(ccInUse.Get<TcpCongestionOps>());
    flow.ccTypeInUse = inUse->GetInstanceTypeId().GetName();
    tcp->Bind();
    Address local;
    tcp->GetSockName(local);
    uint16_t port = InetSocketAddress::ConvertFrom(local).GetPort();
    m_sim->flowByEndpoint[{GetNode()->GetId(), port}] = m_flowId;

    tcp->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&FlowSender::OnCwnd, this));
    tcp->TraceConnectWithoutContext("LastRTT", MakeCallback(&FlowSender::OnRtt, this));
    tcp->TraceConnectWithoutContext("Rx", MakeCallback(&FlowSender::OnRx, this));
    tcp->TraceConnectWithoutContext("Tx", MakeCallback(&FlowSender::OnTx, this));
    tcp->TraceConnectWithoutContext("HighestSequence", MakeCallback(&FlowSender::OnHighTx, this));
    tcp->TraceConnectWithoutContext("HighestRxAck", MakeCallback(&FlowSender::OnHighAck, this));
    tcp->TraceConnectWithoutContext("RTO", MakeCallback(&FlowSender::OnRto, this));
    tcp->TraceConnectWithoutContext("CongState", MakeCallback(&FlowSender::OnCongState, this));
    m_socket->SetConnectCallback(MakeCallback(&FlowSender::OnConnected, this),
                                 MakeCallback(&FlowSender::OnConnectFailed, this));
    m_socket->Connect(InetSocketAddress(flow.dstAddress, kSinkPort));
}

void
FlowSender::StopApplication()
{
    if (m_socket)
    {
        m_socket->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
    }
}

void
FlowSender::OnConnected(Ptr<Socket> socket)
{
    m_sim->flows[m_flowId].connectedS = Simulator::Now().GetSeconds();
    if (m_sim->flows[m_flowId].spec.request_bytes > 0)
    {
        // the receiver asks first (FlowSink::OnAccept); the data answers its request
        socket->SetRecvCallback(MakeCallback(&FlowSender::OnRequest, this));
        return;
    }
    StartSending(socket);
}

void
FlowSender::OnRequest(Ptr<Socket> socket)
{
    Ptr<Packet> packet;
    while ((packet = socket->Recv()))
    {
        m_requestReceived += packet->GetSize();
    }
    if (!m_sending && m_requestReceived >= m_sim->flows[m_flowId].spec.request_bytes)
    {
        StartSending(socket);
    }
}

void
FlowSender::StartSending(Ptr<Socket> socket)
{
    m_sending = true;
    socket->SetSendCallback(MakeCallback(&FlowSender::Fill, this));
    Fill(socket, socket->GetTxAvailable());
}

void
FlowSender::StoreInHostCache()
{
    // FreeBSD 9.2 (tcp_discardcb): a connection with at least 4 RTT samples leaves its
    // ssthresh to the host cache when it was lowered by a loss (below half the send
    // buffer); the cache averages it with what it held (tcp_hc_update)
    m_cached = true;
    FlowState& flow = m_sim->flows[m_flowId];
    Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(m_socket);
    if (flow.counters.rttCount < 4 || !tcp)
    {
        return;
    }
    const uint32_t ssthresh = SocketStateOf::Get(*tcp)->m_ssThresh.Get();
    UintegerValue sendBuffer;
    tcp->GetAttribute("SndBufSize", sendBuffer);
    if (ssthresh == 0 || ssthresh >= sendBuffer.Get() / 2)
    {
        return;
    }
    HostCacheEntry& entry = m_sim->hostCache[HostCacheKey(flow)];
    entry.ssthreshBytes =
        entry.ssthreshBytes == 0 ? ssthresh : (entry.ssthreshBytes + ssthresh) / 2;
}

void
FlowSender::OnConnectFailed(Ptr<Socket> /*socket*/)
{
    NS_FATAL_ERROR("flow " << m_sim->flows[m_flowId].spec.name << " could not connect");
}

void
FlowSender::Fill(Ptr<Socket> socket, uint32_t /*available*/)
{
    const bool bulk = (m_sim->flows[m_flowId].spec.bytes == 0);
    while (!m_closed && (bulk || m_remaining > 0))
    {
        uint32_t room = socket->GetTxAvailable();
        if (room == 0)
        {
            return;
        }
        uint64_t chunk = std::min<uint64_t>(room, 64 * 1024);
        if (!bulk)
        {
            chunk = std::min<uint64_t>(chunk, m_remaining);
        }
        int sent = socket->Send(Create<Packet>(static_cast<uint32_t>(chunk)));
        if (sent <= 0)
        {
            return;
        }
        if (!bulk)
        {
            m_remaining -= static_cast<uint64_t>(sent);
        }
    }
    if (!bulk && m_remaining == 0 && !m_closed)
    {
        m_closed = true;
        socket->Close();
    }
}

void
FlowSender::OnCwnd(uint32_t /*oldValue*/, uint32_t newValue)
{
    m_sim->flows[m_flowId].cwndBytes = newValue;
}

void
FlowSender::OnRtt(Time /*oldValue*/, Time newValue)
{
    m_lastRtt = newValue;
}

void
FlowSender::OnRx(Ptr<const Packet> /*packet*/, const TcpHeader& header, Ptr<const TcpSocketBase>)
{
    // One RTT sample per ACK that acknowledges new data. "LastRTT" is a traced
    // value: it fires only when the sample differs from the previous one, so it
    // cannot count samples. The Rx trace fires before the socket processes this
    // ACK, when LastRTT still holds the sample of the previous new-data ACK: that
    // sample is counted here (every sample but the run's last, one ACK late).
    if (!(header.GetFlags() & TcpHeader::ACK) ||
        (m_anyAck && header.GetAckNumber() <= m_highestAck))
    {
        return;
    }
    if (m_anyAck && m_lastRtt.IsStrictlyPositive())
    {
        FlowState& flow = m_sim->flows[m_flowId];
        flow.Add(&Counters::rttSumS, m_lastRtt.GetSeconds());
        flow.Add(&Counters::rttCount);
    }
    m_anyAck = true;
    m_highestAck = header.GetAckNumber();
}

void
FlowSender::OnTx(Ptr<const Packet> packet, const TcpHeader& header, Ptr<const TcpSocketBase>)
{
    uint32_t payload = packet->GetSize();
    if (payload == 0)
    {
        return;
    }
    FlowState& flow = m_sim->flows[m_flowId];
    flow.Add(&Counters::txDataPkts);
    SequenceNumber32 end = header.GetSequenceNumber() + payload;
    if (flow.anySent && end <= flow.highestSent)
    {
        flow.Add(&Counters::retxPkts);
    }
    else
    {
        flow.highestSent = end;
        flow.anySent = true;
    }
}

void
FlowSender::OnHighTx(SequenceNumber32 /*oldValue*/, SequenceNumber32 newValue)
{
    FlowState& flow = m_sim->flows[m_flowId];
    flow.AccumulateUnacked(Simulator::Now().GetSeconds());
    flow.highTxMark = newValue;
    flow.haveHighTx = true;
}

void
FlowSender::OnHighAck(SequenceNumber32 /*oldValue*/, SequenceNumber32 newValue)
{
    FlowState& flow = m_sim->flows[m_flowId];
    flow.AccumulateUnacked(Simulator::Now().GetSeconds());
    flow.highAckMark = newValue;
    flow.haveHighAck = true;
    if (flow.spec.host_cache && m_closed && !m_cached && flow.haveHighTx &&
        newValue >= flow.highTxMark)
    {
        StoreInHostCache(); // every byte of the transfer is acknowledged
    }
}

void
FlowSender::OnRto(Time oldValue, Time newValue)
{
    // ReTxTimeout doubles the timer before it sets the Loss state: a doubling seen
    // while already in Loss is a back-off, i.e. one more expiry of the same episode.
    FlowState& flow = m_sim->flows[m_flowId];
    if (flow.inLoss && oldValue.IsStrictlyPositive() && newValue == oldValue + oldValue)
    {
        flow.Add(&Counters::rtoCount);
    }
}

void
FlowSender::OnCongState(TcpSocketState::TcpCongState_t oldValue,
                        TcpSocketState::TcpCongState_t newValue)
{
    // ns-3 enters CA_LOSS only in TcpSocketBase::ReTxTimeout (an RTO expiry).
    FlowState& flow = m_sim->flows[m_flowId];
    if (newValue == TcpSocketState::CA_LOSS && oldValue != TcpSocketState::CA_LOSS)
    {
        flow.Add(&Counters::rtoCount);
    }
    flow.inLoss = (newValue == TcpSocketState::CA_LOSS);
}

// ----------------------------------------------------------------------------
// PoissonSender

void
PoissonSender::StartApplication()
{
    FlowState& flow = m_sim->flows[m_flowId];
    m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    m_socket->Bind();
    Address local;
    m_socket->GetSockName(local);
    m_sim->flowByEndpoint[{GetNode()->GetId(), InetSocketAddress::ConvertFrom(local).GetPort()}] =
        m_flowId;
    m_socket->Connect(InetSocketAddress(flow.dstAddress, kUdpSinkPort));
    m_interval = CreateObject<ExponentialRandomVariable>();
    m_interval->SetAttribute("Mean", DoubleValue(flow.spec.packet_bytes * 8.0 / flow.spec.rate_bps));
    m_next = Simulator::Schedule(Seconds(m_interval->GetValue()), &PoissonSender::SendOne, this);
    flow.connectedS = Simulator::Now().GetSeconds();
}

void
PoissonSender::StopApplication()
{
    Simulator::Cancel(m_next);
}

void
PoissonSender::SendOne()
{
    FlowState& flow = m_sim->flows[m_flowId];
    m_socket->Send(Create<Packet>(flow.spec.packet_bytes - kUdpIpHeaderBytes));
    flow.Add(&Counters::txDataPkts);
    m_next = Simulator::Schedule(Seconds(m_interval->GetValue()), &PoissonSender::SendOne, this);
}

// ----------------------------------------------------------------------------
// FlowSink

void
FlowSink::StartApplication()
{
    m_listener = TcpSocketKarn::Create(GetNode()->GetObject<TcpL4Protocol>());
    // accepted sockets are copies of the listener: a host's own stack settings
    for (std::size_t i = 0; i < m_sim->nodes.GetN(); ++i)
    {
        if (m_sim->nodes.Get(i) == GetNode())
        {
            SetSocketAttributes(*DynamicCast<TcpSocketBase>(m_listener),
                                m_sim->nodeSocketAttributes[i]);
        }
    }
    m_listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), kSinkPort));
    m_listener->Listen();
    m_listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                  MakeCallback(&FlowSink::OnAccept, this));
    m_udp = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
    m_udp->Bind(InetSocketAddress(Ipv4Address::GetAny(), kUdpSinkPort));
    m_udp->SetRecvCallback(MakeCallback(&FlowSink::OnUdpRecv, this));
}

void
FlowSink::StopApplication()
{
    if (m_listener)
    {
        m_listener->Close();
    }
    if (m_udp)
    {
        m_udp->Close();
    }
}

void
FlowSink::OnAccept(Ptr<Socket> socket, const Address& from)
{
    InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
    int flowId = m_sim->FlowOfEndpoint(peer.GetIpv4(), peer.GetPort());
    NS_ABORT_MSG_IF(flowId < 0, "connection from an unknown endpoint " << peer.GetIpv4());
    m_flowOf[PeekPointer(socket)] = flowId;
    m_accepted.push_back(socket);
    socket->SetRecvCallback(MakeCallback(&FlowSink::OnRecv, this));
    socket->SetCloseCallbacks(MakeCallback(&FlowSink::OnPeerClose, this),
                              MakeCallback(&FlowSink::OnPeerClose, this));
    const uint64_t request = m_sim->flows[flowId].spec.request_bytes;
    if (request > 0)
    {
        // the receiving end asks for the data (a browser's request): it crosses the
        // receiver's uplink before the sender starts (FlowSender::OnRequest)
        socket->Send(Create<Packet>(static_cast<uint32_t>(request)));
    }
}

void
FlowSink::OnRecv(Ptr<Socket> socket)
{
    FlowState& flow = m_sim->flows[m_flowOf.at(PeekPointer(socket))];
    Ptr<Packet> packet;
    while ((packet = socket->Recv()))
    {
        flow.Add(&Counters::rxBytes, packet->GetSize());
    }
    if (flow.spec.bytes > 0 && flow.counters.rxBytes >= flow.spec.bytes && std::isnan(flow.endS))
    {
        flow.endS = Simulator::Now().GetSeconds();
    }
}

void
FlowSink::OnUdpRecv(Ptr<Socket> socket)
{
    Ptr<Packet> packet;
    Address from;
    while ((packet = socket->RecvFrom(from)))
    {
        InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
        int flowId = m_sim->FlowOfEndpoint(peer.GetIpv4(), peer.GetPort());
        if (flowId >= 0)
        {
            m_sim->flows[flowId].Add(&Counters::rxBytes, packet->GetSize());
        }
    }
}

void
FlowSink::OnPeerClose(Ptr<Socket> socket)
{
    socket->Close();
}

} // namespace tcprepro
