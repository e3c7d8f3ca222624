// Implementation of tcprepro::Simulation: topology builder, TCP flow
// applications and C++ trace sinks that record into plain arrays.
//
// Who does what:
//  - FlowSender  opens one TCP socket with its own congestion control, keeps
//                its send buffer full (bulk) or writes `bytes` then closes;
//  - PoissonSender sends UDP packets at exponential intervals (a Poisson
//                packet stream of a given rate);
//  - FlowSink    (one per receiving node) accepts TCP connections and
//                receives UDP packets, counts bytes per flow and stamps the
//                completion time of sized flows;
//  - Impl        owns the nodes, the traced link directions, the per-flow
//                state, and the periodic sampler that appends one row per
//                sample interval to the result arrays.
//
// SPDX-License-Identifier: GPL-2.0-only

#include "tcprepro.h"

#include "asymmetric-channel.h"
#include "pfq-lqd-queue-disc.h"
#include "tcp-limited-slow-start.h"
#include "trace-state.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace tcprepro
{

using namespace ns3;

namespace
{

constexpr uint16_t kSinkPort = 9;
constexpr uint16_t kUdpSinkPort = 10;
constexpr uint32_t kUdpIpHeaderBytes = 28;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
bool g_simulationActive = false;

std::vector<std::pair<std::string, std::string>>
ParseAttributes(const std::string& attributes)
{
    std::vector<std::pair<std::string, std::string>> out;
    std::stringstream ss(attributes);
    std::string item;
    while (std::getline(ss, item, '|'))
    {
        if (item.empty())
        {
            continue;
        }
        auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0)
        {
            throw std::invalid_argument("malformed attribute '" + item + "' (expected Name=Value)");
        }
        out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
    return out;
}

ObjectFactory
MakeFactory(const std::string& type, const std::string& attributes)
{
    std::string error = CheckAttributes(type, attributes);
    if (!error.empty())
    {
        throw std::invalid_argument(error);
    }
    ObjectFactory factory;
    factory.SetTypeId(type);
    for (const auto& [name, value] : ParseAttributes(attributes))
    {
        factory.Set(name, StringValue(value));
    }
    return factory;
}

} // namespace

std::string
CheckAttributes(const std::string& type, const std::string& attributes)
{
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(type, &tid))
    {
        return "unknown ns-3 type '" + type + "'";
    }
    std::vector<std::pair<std::string, std::string>> parsed;
    try
    {
        parsed = ParseAttributes(attributes);
    }
    catch (const std::invalid_argument& e)
    {
        return e.what();
    }
    for (const auto& [name, value] : parsed)
    {
        TypeId::AttributeInformation info;
        if (!tid.LookupAttributeByName(name, &info))
        {
            return type + " has no attribute '" + name + "'";
        }
        if (!info.checker->CreateValidValue(StringValue(value)))
        {
            return type + "::" + name + ": invalid value '" + value + "' (" + info.help + ")";
        }
    }
    return "";
}

#ifndef TCPREPRO_NS3_VERSION
#error "the build must define TCPREPRO_NS3_VERSION (the ns-3 version of the wheel)"
#endif

std::string
Ns3Version()
{
    return TCPREPRO_NS3_VERSION;
}

struct Simulation::Impl;

/// Cumulative counters of a flow, or of a group of flows (a traffic generator).
struct Counters
{
    double rxBytes = 0;
    double rttSumS = 0;
    double rttCount = 0;
    double txDataPkts = 0;
    double retxPkts = 0;
    double lostDataPkts = 0;
    double lostAckPkts = 0;
    double randomLostPkts = 0;
    double unackedByteS = 0; ///< time integral of the unacknowledged bytes (byte x s)
    double rtoCount = 0;     ///< retransmission timeouts that expired
};

/// Per-flow state shared by the sender, the sink and the sampler.
struct FlowState
{
    FlowSpec spec;
    uint32_t srcNodeId = 0;
    Ipv4Address dstAddress;
    double connectedS = kNaN;
    double endS = kNaN;
    double cwndBytes = kNaN;
    Counters counters;
    Counters* group = nullptr; ///< the group's counters, also incremented

    /// Add `amount` to one counter of the flow and of its group.
    void Add(double Counters::* field, double amount = 1)
    {
        counters.*field += amount;
        if (group)
        {
            group->*field += amount;
        }
    }

    SequenceNumber32 highestSent{0};
    bool anySent = false;
    std::string ccTypeInUse;
    std::vector<double> ccState; //!< last value of each sampled congestion-control trace

    // ---- send window in use and retransmission timeouts (study D) ----
    // Unacknowledged bytes = highest sequence sent - highest cumulative ACK
    // received, integrated over time so the store can report its time average.
    SequenceNumber32 highTxMark{0};
    SequenceNumber32 highAckMark{0};
    bool haveHighTx = false;
    bool haveHighAck = false;
    double unackedSinceS = 0;
    // RTO expiries: each entry into the Loss state, plus each back-off (the
    // timer doubling, RFC 6298 5.5) while already in it.
    bool inLoss = false;

    double UnackedBytes() const
    {
        if (!haveHighTx || !haveHighAck || highTxMark <= highAckMark)
        {
            return 0.0;
        }
        return static_cast<double>(highTxMark - highAckMark);
    }

    /// Add the current unacknowledged bytes x the time since the last change.
    void AccumulateUnacked(double nowS)
    {
        Add(&Counters::unackedByteS, UnackedBytes() * (nowS - unackedSinceS));
        unackedSinceS = nowS;
    }
};

/// Sends one flow's data over one TCP socket with a per-socket congestion control.
class FlowSender : public Application
{
  public:
    FlowSender(Simulation::Impl* sim, int flowId)
        : m_sim(sim),
          m_flowId(flowId)
    {
    }

  private:
    void StartApplication() override;
    void StopApplication() override;
    void Fill(Ptr<Socket> socket, uint32_t available);
    void OnConnected(Ptr<Socket> socket);
    void OnConnectFailed(Ptr<Socket> socket);
    void OnCwnd(uint32_t oldValue, uint32_t newValue);
    void OnRtt(Time oldValue, Time newValue);
    void OnTx(Ptr<const Packet> packet, const TcpHeader& header, Ptr<const TcpSocketBase> socket);
    void OnRx(Ptr<const Packet> packet, const TcpHeader& header, Ptr<const TcpSocketBase> socket);
    void OnHighTx(SequenceNumber32 oldValue, SequenceNumber32 newValue);
    void OnHighAck(SequenceNumber32 oldValue, SequenceNumber32 newValue);
    void OnRto(Time oldValue, Time newValue);
    void OnCongState(TcpSocketState::TcpCongState_t oldValue,
                     TcpSocketState::TcpCongState_t newValue);

    Simulation::Impl* m_sim;
    int m_flowId;
    Ptr<Socket> m_socket;
    uint64_t m_remaining = 0;
    bool m_closed = false;
    Time m_lastRtt{Seconds(0)};
    SequenceNumber32 m_highestAck{0};
    bool m_anyAck = false;
};

/// Sends UDP packets of a fixed size at exponentially distributed intervals.
class PoissonSender : public Application
{
  public:
    PoissonSender(Simulation::Impl* sim, int flowId)
        : m_sim(sim),
          m_flowId(flowId)
    {
    }

  private:
    void StartApplication() override;
    void StopApplication() override;
    void SendOne();

    Simulation::Impl* m_sim;
    int m_flowId;
    Ptr<Socket> m_socket;
    Ptr<ExponentialRandomVariable> m_interval;
    EventId m_next;
};

/// Accepts every connection on one node and attributes bytes to flows.
class FlowSink : public Application
{
  public:
    explicit FlowSink(Simulation::Impl* sim)
        : m_sim(sim)
    {
    }

  private:
    void StartApplication() override;
    void StopApplication() override;
    void OnAccept(Ptr<Socket> socket, const Address& from);
    void OnRecv(Ptr<Socket> socket);
    void OnUdpRecv(Ptr<Socket> socket);
    void OnPeerClose(Ptr<Socket> socket);

    Simulation::Impl* m_sim;
    Ptr<Socket> m_listener;
    Ptr<Socket> m_udp;
    std::unordered_map<Socket*, int> m_flowOf;
    std::vector<Ptr<Socket>> m_accepted;
};

/// One traced direction of a link.
struct LinkTrace
{
    std::string name;
    double rateBps = 0;
    double delayS = 0;
    Ptr<QueueDisc> qdisc;
    Ptr<Queue<Packet>> deviceQueue;
    uint64_t txBytes = 0;
    uint64_t randomDrops = 0;
    uint32_t maxPkts = 0;
};

struct Simulation::Impl
{
    NodeContainer nodes;
    std::vector<std::string> nodeNames;
    std::vector<FlowState> flows;
    std::vector<std::size_t> flowEntity; ///< series entity of each flow (set by Build)
    std::size_t numUngrouped = 0;
    std::vector<std::string> groupNames;
    std::vector<Counters> groups;
    std::vector<LinkTrace> links;
    std::vector<Ptr<FlowSink>> sinks; // index: node index, null when none
    std::map<std::pair<uint32_t, uint16_t>, int> flowByEndpoint; // (src node id, src port)
    std::map<uint32_t, uint32_t> nodeOfAddress;                   // IPv4 (host order) -> node id
    uint32_t subnetCounter = 0;
    std::vector<std::string> ccSources; //!< congestion-control traced values to sample
    double sampleIntervalS = 0.1;
    bool built = false;

    std::vector<double> sampleTimes;
    std::map<std::string, std::vector<double>> flowSeries;
    std::map<std::string, std::vector<double>> linkSeries;

    void Sample();
    /// Per-flow data packets stored in traced PFQ/LQD queue discs (series backlog_pkts).
    void SampleFlowBacklogs();
    int FlowOfEndpoint(Ipv4Address address, uint16_t port) const;
    void OnQdiscDrop(Ptr<const QueueDiscItem> item);
    /// Attribute a dropped TCP/IPv4 packet to its flow: (flow, carries data).
    std::pair<int, bool> Classify(const Ipv4Header& ip, Ptr<const Packet> segment) const;
};

// ----------------------------------------------------------------------------
// FlowSender

void
FlowSender::StartApplication()
{
    FlowState& flow = m_sim->flows[m_flowId];
    m_remaining = flow.spec.bytes;
    m_socket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
    Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(m_socket);
    NS_ABORT_MSG_UNLESS(tcp, "the TCP socket factory did not return a TcpSocketBase");
    for (const auto& [name, value] : ParseAttributes(flow.spec.socket_attributes))
    {
        tcp->SetAttribute(name, StringValue(value));
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
    PointerValue ccInUse;
    tcp->GetAttribute("CongestionOps", ccInUse);
    Ptr<TcpCongestionOps> inUse = ccInUse.Get<TcpCongestionOps>();
    if (auto limited = DynamicCast<TcpLimitedSlowStart>(inUse))
    {
        inUse = limited->GetInner(); // report the congestion control, not the decorator
    }
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
    socket->SetSendCallback(MakeCallback(&FlowSender::Fill, this));
    Fill(socket, socket->GetTxAvailable());
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
    m_listener = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
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

// ----------------------------------------------------------------------------
// Impl

int
Simulation::Impl::FlowOfEndpoint(Ipv4Address address, uint16_t port) const
{
    auto node = nodeOfAddress.find(address.Get());
    if (node == nodeOfAddress.end())
    {
        return -1;
    }
    auto flow = flowByEndpoint.find({node->second, port});
    return flow == flowByEndpoint.end() ? -1 : flow->second;
}

std::pair<int, bool>
Simulation::Impl::Classify(const Ipv4Header& ip, Ptr<const Packet> segment) const
{
    if (ip.GetProtocol() == UdpL4Protocol::PROT_NUMBER)
    {
        UdpHeader udp;
        segment->PeekHeader(udp);
        return {FlowOfEndpoint(ip.GetSource(), udp.GetSourcePort()), true};
    }
    if (ip.GetProtocol() != TcpL4Protocol::PROT_NUMBER)
    {
        return {-1, false};
    }
    TcpHeader tcp;
    Ptr<Packet> copy = segment->Copy();
    copy->RemoveHeader(tcp);
    if (copy->GetSize() > 0)
    {
        return {FlowOfEndpoint(ip.GetSource(), tcp.GetSourcePort()), true};
    }
    return {FlowOfEndpoint(ip.GetDestination(), tcp.GetDestinationPort()), false};
}

void
Simulation::Impl::OnQdiscDrop(Ptr<const QueueDiscItem> item)
{
    Ptr<const Ipv4QueueDiscItem> ipItem = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (!ipItem)
    {
        return;
    }
    auto [flowId, data] = Classify(ipItem->GetHeader(), item->GetPacket());
    if (flowId >= 0)
    {
        flows[flowId].Add(data ? &Counters::lostDataPkts : &Counters::lostAckPkts);
    }
}

void
Simulation::Impl::Sample()
{
    sampleTimes.push_back(Simulator::Now().GetSeconds());
    auto record = [this](const Counters& c, double cwnd) {
        flowSeries["rx_bytes"].push_back(c.rxBytes);
        flowSeries["cwnd_bytes"].push_back(cwnd);
        flowSeries["rtt_sum_s"].push_back(c.rttSumS);
        flowSeries["rtt_count"].push_back(c.rttCount);
        flowSeries["tx_data_pkts"].push_back(c.txDataPkts);
        flowSeries["retx_pkts"].push_back(c.retxPkts);
        flowSeries["lost_data_pkts"].push_back(c.lostDataPkts);
        flowSeries["lost_ack_pkts"].push_back(c.lostAckPkts);
        flowSeries["random_lost_pkts"].push_back(c.randomLostPkts);
        flowSeries["unacked_byte_s"].push_back(c.unackedByteS);
        flowSeries["rto_count"].push_back(c.rtoCount);
    };
    const double nowS = Simulator::Now().GetSeconds();
    for (FlowState& flow : flows) // bring every integral (and its group's) up to now
    {
        flow.AccumulateUnacked(nowS);
    }
    for (const FlowState& flow : flows)
    {
        if (flow.spec.group < 0)
        {
            record(flow.counters, flow.cwndBytes);
            for (std::size_t i = 0; i < ccSources.size(); ++i)
            {
                flowSeries["cc:" + ccSources[i]].push_back(flow.ccState.empty() ? kNaN
                                                                                : flow.ccState[i]);
            }
        }
    }
    for (const Counters& group : groups)
    {
        record(group, kNaN);
        for (const auto& source : ccSources)
        {
            flowSeries["cc:" + source].push_back(kNaN);
        }
    }
    SampleFlowBacklogs();
    for (LinkTrace& link : links)
    {
        const auto& stats = link.qdisc->GetStats();
        double drops = stats.nTotalDroppedPackets + link.deviceQueue->GetTotalDroppedPackets();
        linkSeries["queue_pkts"].push_back(link.qdisc->GetNPackets() +
                                           link.deviceQueue->GetNPackets());
        linkSeries["queue_bytes"].push_back(link.qdisc->GetNBytes() +
                                            link.deviceQueue->GetNBytes());
        linkSeries["drops_pkts"].push_back(drops);
        linkSeries["tx_bytes"].push_back(static_cast<double>(link.txBytes));
        linkSeries["random_drops_pkts"].push_back(static_cast<double>(link.randomDrops));
    }
    Simulator::Schedule(Seconds(sampleIntervalS), &Simulation::Impl::Sample, this);
}

void
Simulation::Impl::SampleFlowBacklogs()
{
    std::vector<double> backlog(flowEntity.empty() ? 0 : groups.size() + numUngrouped, 0.0);
    bool anyPfq = false;
    for (const LinkTrace& link : links)
    {
        Ptr<PfqLqdQueueDisc> pfq = DynamicCast<PfqLqdQueueDisc>(link.qdisc);
        if (!pfq)
        {
            continue;
        }
        anyPfq = true;
        pfq->ForEachFlow([this, &backlog](Ptr<const QueueDiscItem> item, uint32_t packets) {
            Ptr<const Ipv4QueueDiscItem> ipItem = DynamicCast<const Ipv4QueueDiscItem>(item);
            if (!ipItem)
            {
                return;
            }
            auto [flowId, data] = Classify(ipItem->GetHeader(), item->GetPacket());
            if (flowId >= 0 && data)
            {
                backlog[flowEntity[flowId]] += packets;
            }
        });
    }
    if (anyPfq)
    {
        auto& series = flowSeries["backlog_pkts"];
        series.insert(series.end(), backlog.begin(), backlog.end());
    }
}

namespace
{

void
CountTxBytes(Simulation::Impl* sim, size_t link, Ptr<const Packet> packet)
{
    sim->links[link].txBytes += packet->GetSize();
}

/// A packet the random-loss model destroyed at the receiving device (PPP header still on).
void
CountRandomDrop(Simulation::Impl* sim, size_t link, Ptr<const Packet> packet)
{
    sim->links[link].randomDrops++;
    Ptr<Packet> copy = packet->Copy();
    PppHeader ppp;
    copy->RemoveHeader(ppp);
    if (ppp.GetProtocol() != 0x0021) // IPv4
    {
        return;
    }
    Ipv4Header ip;
    copy->RemoveHeader(ip);
    auto [flowId, data] = sim->Classify(ip, copy);
    if (flowId >= 0 && data)
    {
        sim->flows[flowId].Add(&Counters::randomLostPkts);
    }
}

void
TrackMaxQueue(Simulation::Impl* sim, size_t link, uint32_t /*oldValue*/, uint32_t newValue)
{
    LinkTrace& trace = sim->links[link];
    trace.maxPkts = std::max(trace.maxPkts, newValue + trace.deviceQueue->GetNPackets());
}

} // namespace

// ----------------------------------------------------------------------------
// Simulation

Simulation::Simulation(uint32_t seed, uint32_t run)
    : m_impl(std::make_unique<Impl>())
{
    if (g_simulationActive)
    {
        throw std::logic_error("only one tcprepro::Simulation may exist at a time");
    }
    g_simulationActive = true;
    Config::Reset();
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);
    // Random variables without an explicit stream (the error models' among them) take
    // the next automatic stream index, a process-wide counter that Simulator::Destroy
    // does not reset: without this, a run's losses depended on the runs before it in
    // the same worker process.
    RngSeedManager::ResetNextStreamIndex();
}

Simulation::~Simulation()
{
    m_impl->sinks.clear();
    m_impl->links.clear();
    Simulator::Destroy();
    g_simulationActive = false;
}

void
Simulation::SetDefault(const std::string& path, const std::string& value)
{
    if (!Config::SetDefaultFailSafe(path, StringValue(value)))
    {
        throw std::invalid_argument("cannot set ns-3 default " + path + " = " + value);
    }
}

void
Simulation::SampleCongestionState(const std::string& source)
{
    if (Simulator::Now().IsStrictlyPositive())
    {
        throw std::logic_error("SampleCongestionState must be called before RunUntil");
    }
    if (std::find(m_impl->ccSources.begin(), m_impl->ccSources.end(), source) ==
        m_impl->ccSources.end())
    {
        m_impl->ccSources.push_back(source);
    }
}

int
Simulation::AddNode(const std::string& name)
{
    Ptr<Node> node = CreateObject<Node>();
    InternetStackHelper stack;
    stack.Install(node);
    m_impl->nodes.Add(node);
    m_impl->nodeNames.push_back(name);
    m_impl->sinks.emplace_back(nullptr);
    return static_cast<int>(m_impl->nodes.GetN()) - 1;
}

void
Simulation::AddLink(int nodeA, int nodeB, const DirectionSpec& aToB, const DirectionSpec& bToA)
{
    const int n = static_cast<int>(m_impl->nodes.GetN());
    if (nodeA < 0 || nodeA >= n || nodeB < 0 || nodeB >= n || nodeA == nodeB)
    {
        throw std::invalid_argument("AddLink: bad node indices");
    }
    for (const DirectionSpec* spec : {&aToB, &bToA})
    {
        if (!(spec->rate_bps > 0) || spec->delay_s < 0 || spec->device_queue_pkts == 0 ||
            spec->loss_rate < 0 || spec->loss_rate >= 1)
        {
            throw std::invalid_argument(
                "AddLink: rate must be > 0, delay >= 0, device queue >= 1, 0 <= loss rate < 1");
        }
    }
    // Validate the queue discs before creating anything.
    ObjectFactory qdiscAFactory = MakeFactory(aToB.qdisc_type, aToB.qdisc_attributes);
    ObjectFactory qdiscBFactory = MakeFactory(bToA.qdisc_type, bToA.qdisc_attributes);

    Ptr<Node> a = m_impl->nodes.Get(nodeA);
    Ptr<Node> b = m_impl->nodes.Get(nodeB);
    auto channel = CreateObject<AsymmetricPointToPointChannel>();
    channel->SetAttribute("DelayFromFirst", TimeValue(Seconds(aToB.delay_s)));
    channel->SetAttribute("DelayFromSecond", TimeValue(Seconds(bToA.delay_s)));

    NetDeviceContainer devices;
    std::vector<Ptr<Queue<Packet>>> deviceQueues;
    for (auto [node, spec] : {std::pair{a, &aToB}, std::pair{b, &bToA}})
    {
        auto device = CreateObject<PointToPointNetDevice>();
        device->SetAddress(Mac48Address::Allocate());
        device->SetDataRate(DataRate(static_cast<uint64_t>(std::llround(spec->rate_bps))));
        auto queue = CreateObject<DropTailQueue<Packet>>();
        queue->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, spec->device_queue_pkts));
        device->SetQueue(queue);
        // Flow control between the queue disc and the device queue (as
        // PointToPointHelper does): without it the qdisc would push packets
        // into a full device queue and lose them.
        auto queueInterface = CreateObject<NetDeviceQueueInterface>();
        queueInterface->GetTxQueue(0)->ConnectQueueTraces(queue);
        device->AggregateObject(queueInterface);
        node->AddDevice(device);
        device->Attach(channel);
        devices.Add(device);
        deviceQueues.push_back(queue);
    }
    std::vector<Ptr<QueueDisc>> qdiscs{qdiscAFactory.Create<QueueDisc>(),
                                       qdiscBFactory.Create<QueueDisc>()};
    for (int i = 0; i < 2; ++i)
    {
        Ptr<NetDevice> device = devices.Get(i);
        device->GetNode()->GetObject<TrafficControlLayer>()->SetRootQueueDiscOnDevice(device,
                                                                                      qdiscs[i]);
    }

    Ipv4AddressHelper addresses;
    uint32_t subnet = m_impl->subnetCounter++;
    std::ostringstream base;
    base << "10." << ((subnet >> 14) & 0xff) << "." << ((subnet >> 6) & 0xff) << "."
         << ((subnet & 0x3f) << 2);
    addresses.SetBase(Ipv4Address(base.str().c_str()), "255.255.255.252");
    Ipv4InterfaceContainer interfaces = addresses.Assign(devices);
    m_impl->nodeOfAddress[interfaces.GetAddress(0).Get()] = a->GetId();
    m_impl->nodeOfAddress[interfaces.GetAddress(1).Get()] = b->GetId();

    const DirectionSpec* specs[2] = {&aToB, &bToA};
    for (int i = 0; i < 2; ++i)
    {
        // Random loss of this direction: packets are destroyed on arrival at the
        // other end, after crossing the queue (as a lossy line would).
        Ptr<PointToPointNetDevice> receiver =
            DynamicCast<PointToPointNetDevice>(devices.Get(1 - i));
        if (specs[i]->loss_rate > 0)
        {
            auto errorModel = CreateObject<RateErrorModel>();
            errorModel->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
            errorModel->SetRate(specs[i]->loss_rate);
            receiver->SetReceiveErrorModel(errorModel);
        }
        if (specs[i]->trace_name.empty())
        {
            continue;
        }
        m_impl->links.push_back(LinkTrace{specs[i]->trace_name,
                                          specs[i]->rate_bps,
                                          specs[i]->delay_s,
                                          qdiscs[i],
                                          deviceQueues[i]});
        size_t index = m_impl->links.size() - 1;
        Impl* impl = m_impl.get();
        devices.Get(i)->TraceConnectWithoutContext("PhyTxEnd",
                                                   MakeBoundCallback(&CountTxBytes, impl, index));
        qdiscs[i]->TraceConnectWithoutContext("PacketsInQueue",
                                              MakeBoundCallback(&TrackMaxQueue, impl, index));
        receiver->TraceConnectWithoutContext("PhyRxDrop",
                                             MakeBoundCallback(&CountRandomDrop, impl, index));
        qdiscs[i]->TraceConnectWithoutContext("Drop",
                                              MakeCallback(&Impl::OnQdiscDrop, impl));
    }
}

int
Simulation::AddGroup(const std::string& name)
{
    if (m_impl->built)
    {
        throw std::logic_error("AddGroup() after Build()");
    }
    m_impl->groupNames.push_back(name);
    m_impl->groups.emplace_back();
    return static_cast<int>(m_impl->groups.size()) - 1;
}

int
Simulation::AddFlow(const FlowSpec& spec)
{
    const int n = static_cast<int>(m_impl->nodes.GetN());
    if (m_impl->built)
    {
        throw std::logic_error("AddFlow() after Build()");
    }
    if (spec.src < 0 || spec.src >= n || spec.dst < 0 || spec.dst >= n || spec.src == spec.dst)
    {
        throw std::invalid_argument("AddFlow " + spec.name + ": bad node indices");
    }
    if (spec.start_s < 0)
    {
        throw std::invalid_argument("AddFlow " + spec.name + ": negative start time");
    }
    if (spec.group >= static_cast<int>(m_impl->groups.size()))
    {
        throw std::invalid_argument("AddFlow " + spec.name + ": unknown group");
    }
    if (spec.udp)
    {
        if (!(spec.rate_bps > 0) || spec.packet_bytes <= kUdpIpHeaderBytes ||
            !(spec.stop_s > spec.start_s))
        {
            throw std::invalid_argument("AddFlow " + spec.name +
                                        ": a UDP source needs rate > 0, packet_bytes > 28 and "
                                        "stop > start");
        }
        FlowState state;
        state.spec = spec;
        m_impl->flows.push_back(state);
        return static_cast<int>(m_impl->flows.size()) - 1;
    }
    std::string error = CheckAttributes(spec.cc_type, spec.cc_attributes);
    if (error.empty())
    {
        error = CheckAttributes("ns3::TcpSocketBase", spec.socket_attributes);
    }
    if (!error.empty())
    {
        throw std::invalid_argument("flow " + spec.name + ": " + error);
    }
    TypeId ccType = TypeId::LookupByName(spec.cc_type);
    if (!ccType.IsChildOf(TcpCongestionOps::GetTypeId()))
    {
        throw std::invalid_argument("flow " + spec.name + ": " + spec.cc_type +
                                    " is not a TcpCongestionOps");
    }
    FlowState state;
    state.spec = spec;
    m_impl->flows.push_back(state);
    return static_cast<int>(m_impl->flows.size()) - 1;
}

void
Simulation::Build(double sampleIntervalS)
{
    if (m_impl->built)
    {
        throw std::logic_error("Build() called twice");
    }
    if (!(sampleIntervalS > 0))
    {
        throw std::invalid_argument("sample interval must be > 0");
    }
    m_impl->built = true;
    m_impl->sampleIntervalS = sampleIntervalS;
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    for (const FlowState& flow : m_impl->flows)
    {
        m_impl->numUngrouped += (flow.spec.group < 0);
    }
    std::size_t nextUngrouped = 0;
    for (size_t i = 0; i < m_impl->flows.size(); ++i)
    {
        FlowState& flow = m_impl->flows[i];
        m_impl->flowEntity.push_back(flow.spec.group < 0 ? nextUngrouped++
                                                         : m_impl->numUngrouped + flow.spec.group);
        if (flow.spec.group >= 0)
        {
            flow.group = &m_impl->groups[flow.spec.group];
        }
        Ptr<Node> src = m_impl->nodes.Get(flow.spec.src);
        Ptr<Node> dst = m_impl->nodes.Get(flow.spec.dst);
        flow.srcNodeId = src->GetId();
        Ptr<Ipv4> ipv4 = dst->GetObject<Ipv4>();
        if (ipv4->GetNInterfaces() < 2)
        {
            throw std::invalid_argument("flow " + flow.spec.name + ": destination has no link");
        }
        flow.dstAddress = ipv4->GetAddress(1, 0).GetLocal();
        if (!m_impl->sinks[flow.spec.dst])
        {
            auto sink = CreateObject<FlowSink>(m_impl.get());
            dst->AddApplication(sink);
            sink->SetStartTime(Seconds(0));
            m_impl->sinks[flow.spec.dst] = sink;
        }
        Ptr<Application> sender;
        if (flow.spec.udp)
        {
            sender = CreateObject<PoissonSender>(m_impl.get(), static_cast<int>(i));
            sender->SetStopTime(Seconds(flow.spec.stop_s));
        }
        else
        {
            sender = CreateObject<FlowSender>(m_impl.get(), static_cast<int>(i));
        }
        src->AddApplication(sender);
        sender->SetStartTime(Seconds(flow.spec.start_s));
    }
    Simulator::Schedule(Seconds(sampleIntervalS), &Simulation::Impl::Sample, m_impl.get());
}

void
Simulation::RunUntil(double tS)
{
    if (!m_impl->built)
    {
        throw std::logic_error("RunUntil() before Build()");
    }
    Time until = Seconds(tS);
    if (until <= Simulator::Now())
    {
        return;
    }
    Simulator::Stop(until - Simulator::Now());
    Simulator::Run();
    // Also run what was scheduled for exactly `until` before this call (e.g. the
    // sample of the last interval): the stop event above was inserted earlier.
    Simulator::Stop(Seconds(0));
    Simulator::Run();
}

double
Simulation::Now() const
{
    return Simulator::Now().GetSeconds();
}

std::vector<double>
Simulation::SampleTimes() const
{
    return m_impl->sampleTimes;
}

std::vector<std::string>
Simulation::FlowNames() const
{
    std::vector<std::string> names;
    for (const auto& flow : m_impl->flows)
    {
        names.push_back(flow.spec.name);
    }
    return names;
}

std::vector<std::string>
Simulation::SeriesNames() const
{
    std::vector<std::string> names;
    for (const auto& flow : m_impl->flows)
    {
        if (flow.spec.group < 0)
        {
            names.push_back(flow.spec.name);
        }
    }
    names.insert(names.end(), m_impl->groupNames.begin(), m_impl->groupNames.end());
    return names;
}

std::vector<std::string>
Simulation::LinkNames() const
{
    std::vector<std::string> names;
    for (const auto& link : m_impl->links)
    {
        names.push_back(link.name);
    }
    return names;
}

std::vector<double>
Simulation::FlowSeries(const std::string& var) const
{
    auto it = m_impl->flowSeries.find(var);
    if (it == m_impl->flowSeries.end())
    {
        if (m_impl->sampleTimes.empty() || (m_impl->flows.empty() && m_impl->groups.empty()))
        {
            return {};
        }
        throw std::invalid_argument("unknown flow series '" + var + "'");
    }
    return it->second;
}

std::vector<double>
Simulation::LinkSeries(const std::string& var) const
{
    auto it = m_impl->linkSeries.find(var);
    if (it == m_impl->linkSeries.end())
    {
        if (m_impl->sampleTimes.empty() || m_impl->links.empty())
        {
            return {};
        }
        throw std::invalid_argument("unknown link series '" + var + "'");
    }
    return it->second;
}

std::vector<double>
Simulation::FlowScalars(const std::string& var) const
{
    std::vector<double> out;
    for (const auto& flow : m_impl->flows)
    {
        if (var == "start_s")
        {
            out.push_back(flow.spec.start_s);
        }
        else if (var == "connected_s")
        {
            out.push_back(flow.connectedS);
        }
        else if (var == "end_s")
        {
            out.push_back(flow.endS);
        }
        else if (var == "bytes")
        {
            out.push_back(static_cast<double>(flow.spec.bytes));
        }
        else if (var == "rx_bytes")
        {
            out.push_back(flow.counters.rxBytes);
        }
        // study B (per-transfer loss picture): the flow's own data segments sent and
        // lost at traced queues over the whole run
        else if (var == "tx_data_pkts")
        {
            out.push_back(flow.counters.txDataPkts);
        }
        else if (var == "lost_data_pkts")
        {
            out.push_back(flow.counters.lostDataPkts);
        }
        else
        {
            throw std::invalid_argument("unknown flow scalar '" + var + "'");
        }
    }
    return out;
}

std::vector<std::string>
Simulation::FlowCongestionTypes() const
{
    std::vector<std::string> names;
    for (const auto& flow : m_impl->flows)
    {
        names.push_back(flow.ccTypeInUse);
    }
    return names;
}

std::vector<double>
Simulation::LinkScalars(const std::string& var) const
{
    std::vector<double> out;
    for (const auto& link : m_impl->links)
    {
        if (var == "queue_max_pkts")
        {
            out.push_back(link.maxPkts);
        }
        else if (var == "rate_bps")
        {
            out.push_back(link.rateBps);
        }
        else if (var == "delay_s")
        {
            out.push_back(link.delayS);
        }
        else
        {
            throw std::invalid_argument("unknown link scalar '" + var + "'");
        }
    }
    return out;
}

uint64_t
Simulation::EventCount() const
{
    return Simulator::GetEventCount();
}

} // namespace tcprepro
