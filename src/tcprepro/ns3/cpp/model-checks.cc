// Drivers for the model checks (see model-checks.h).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "model-checks.h"

#include "tcprepro.h"
#include "trace-state.h"

#include "ns3/double.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/object-factory.h"
#include "ns3/packet.h"
#include "ns3/queue-disc.h"
#include "ns3/random-variable-stream.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-socket-state.h"

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace tcprepro
{

using namespace ns3;

// ----------------------------------------------------------------------------
// CongestionOpsDriver

struct CongestionOpsDriver::Impl
{
    std::string type;
    Ptr<TcpCongestionOps> ops;
    Ptr<TcpSocketState> tcb;
    std::map<std::string, double> state;
    bool initialised = false;

    void Start()
    {
        if (!initialised)
        {
            initialised = true;
            ops->Init(tcb);
        }
    }

    void Refill()
    {
        // a bulk sender: everything the window allows is in flight
        tcb->m_nextTxSequence = tcb->m_lastAckedSeq + tcb->m_cWnd.Get();
        tcb->m_highTxMark = tcb->m_nextTxSequence.Get();
        tcb->m_bytesInFlight = tcb->m_cWnd.Get();
    }
};

CongestionOpsDriver::CongestionOpsDriver(const std::string& typeId,
                                         uint32_t segmentBytes,
                                         uint32_t cwndSegments,
                                         uint32_t ssthreshSegments)
    : m_impl(std::make_unique<Impl>())
{
    std::string error = CheckAttributes(typeId, "");
    if (!error.empty())
    {
        throw std::invalid_argument(error);
    }
    TypeId tid = TypeId::LookupByName(typeId);
    if (!tid.IsChildOf(TcpCongestionOps::GetTypeId()))
    {
        throw std::invalid_argument(typeId + " is not a TcpCongestionOps");
    }
    if (segmentBytes == 0 || cwndSegments == 0 || ssthreshSegments == 0)
    {
        throw std::invalid_argument("segment size, cwnd and ssthresh must be > 0");
    }
    ObjectFactory factory;
    factory.SetTypeId(tid);
    m_impl->type = typeId;
    m_impl->ops = factory.Create<TcpCongestionOps>();
    m_impl->tcb = CreateObject<TcpSocketState>();
    Ptr<TcpSocketState> tcb = m_impl->tcb;
    tcb->m_segmentSize = segmentBytes;
    tcb->m_initialCWnd = cwndSegments;
    tcb->m_cWnd = cwndSegments * segmentBytes;
    tcb->m_ssThresh = ssthreshSegments * segmentBytes;
    tcb->m_congState = TcpSocketState::CA_OPEN;
    tcb->m_lastAckedSeq = SequenceNumber32(1);
    m_impl->Refill();

    Impl* impl = m_impl.get();
    for (TypeId t = tid; t != TcpCongestionOps::GetTypeId(); t = t.GetParent())
    {
        for (std::size_t i = 0; i < t.GetTraceSourceN(); ++i)
        {
            std::string name = t.GetTraceSource(i).name;
            // sources that are not numeric traced values are simply not followed
            ConnectTracedNumber(m_impl->ops, name, [impl, name](double v) {
                impl->state[name] = v;
            });
        }
    }
}

CongestionOpsDriver::~CongestionOpsDriver() = default;

std::string
CongestionOpsDriver::Set(const std::string& name, const std::string& value)
{
    std::string error = CheckAttributes(m_impl->type, name + "=" + value);
    if (error.empty() && !m_impl->ops->SetAttributeFailSafe(name, StringValue(value)))
    {
        error = "cannot set " + name;
    }
    return error;
}

void
CongestionOpsDriver::Ack(uint32_t segments, double rttS)
{
    m_impl->Start();
    Ptr<TcpSocketState> tcb = m_impl->tcb;
    if (tcb->m_congState != TcpSocketState::CA_OPEN)
    {
        m_impl->ops->CongestionStateSet(tcb, TcpSocketState::CA_OPEN);
        tcb->m_congState = TcpSocketState::CA_OPEN;
    }
    Time rtt = Seconds(rttS);
    tcb->m_lastRtt = rtt;
    tcb->m_srtt = rtt;
    tcb->m_minRtt = std::min(tcb->m_minRtt, rtt);
    tcb->m_lastAckedSeq = tcb->m_lastAckedSeq + segments * tcb->m_segmentSize;
    // ns-3 3.44 passes the smoothed RTT to PktsAcked (TcpSocketBase::ProcessAck)
    m_impl->ops->PktsAcked(tcb, segments, tcb->m_srtt);
    m_impl->ops->IncreaseWindow(tcb, segments);
    m_impl->Refill();
}

void
CongestionOpsDriver::Round(double rttS, uint32_t segmentsPerAck)
{
    if (segmentsPerAck == 0)
    {
        throw std::invalid_argument("segments_per_ack must be > 0");
    }
    const SequenceNumber32 end = m_impl->tcb->m_nextTxSequence;
    while (m_impl->tcb->m_lastAckedSeq < end)
    {
        uint32_t left = (end - m_impl->tcb->m_lastAckedSeq) / m_impl->tcb->m_segmentSize;
        Ack(std::max(1U, std::min(segmentsPerAck, left)), rttS);
    }
}

uint32_t
CongestionOpsDriver::Loss()
{
    m_impl->Start();
    Ptr<TcpSocketState> tcb = m_impl->tcb;
    // as TcpSocketBase::EnterRecovery, then the end of the recovery
    m_impl->ops->CongestionStateSet(tcb, TcpSocketState::CA_RECOVERY);
    tcb->m_congState = TcpSocketState::CA_RECOVERY;
    tcb->m_ssThresh = m_impl->ops->GetSsThresh(tcb, tcb->m_cWnd.Get());
    m_impl->ops->CwndEvent(tcb, TcpSocketState::CA_EVENT_COMPLETE_CWR);
    m_impl->ops->CongestionStateSet(tcb, TcpSocketState::CA_OPEN);
    tcb->m_congState = TcpSocketState::CA_OPEN;
    tcb->m_cWnd = tcb->m_ssThresh.Get();
    m_impl->Refill();
    return tcb->m_ssThresh;
}

void
CongestionOpsDriver::Timeout()
{
    m_impl->Start();
    Ptr<TcpSocketState> tcb = m_impl->tcb;
    // as TcpSocketBase::ReTxTimeout
    tcb->m_ssThresh = m_impl->ops->GetSsThresh(tcb, tcb->m_cWnd.Get());
    m_impl->ops->CwndEvent(tcb, TcpSocketState::CA_EVENT_LOSS);
    m_impl->ops->CongestionStateSet(tcb, TcpSocketState::CA_LOSS);
    tcb->m_congState = TcpSocketState::CA_LOSS;
    tcb->m_cWnd = tcb->m_segmentSize;
    m_impl->Refill();
}

uint32_t
CongestionOpsDriver::CwndBytes() const
{
    return m_impl->tcb->m_cWnd;
}

uint32_t
CongestionOpsDriver::SsThreshBytes() const
{
    return m_impl->tcb->m_ssThresh;
}

double
CongestionOpsDriver::State(const std::string& traceSource) const
{
    auto it = m_impl->state.find(traceSource);
    return it == m_impl->state.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
}

// ----------------------------------------------------------------------------
// QdiscExperiment

struct QdiscExperiment::Impl
{
    struct Source
    {
        double rateBps;
        uint32_t packetBytes;
        Ptr<ExponentialRandomVariable> gaps; //!< null: evenly spaced
        double arrived = 0;
        double dropped = 0;
        double served = 0;
    };

    std::string type;
    Ptr<QueueDisc> qdisc;
    double linkRateBps = 0;
    std::vector<Source> sources;
    bool busy = false;
    bool ran = false;
    uint32_t maxStored = 0;

    static Ipv4Address AddressOf(std::size_t index)
    {
        return Ipv4Address(static_cast<uint32_t>(0x0a000001 + (index << 8)));
    }

    int SourceOf(Ptr<const QueueDiscItem> item) const
    {
        auto ip = DynamicCast<const Ipv4QueueDiscItem>(item);
        if (!ip)
        {
            return -1;
        }
        uint32_t index = (ip->GetHeader().GetSource().Get() - 0x0a000001) >> 8;
        return index < sources.size() ? static_cast<int>(index) : -1;
    }

    void Arrive(std::size_t index)
    {
        Source& source = sources[index];
        Ipv4Header header;
        header.SetSource(AddressOf(index));
        header.SetDestination(Ipv4Address("10.255.0.1"));
        header.SetProtocol(17);
        header.SetPayloadSize(source.packetBytes - header.GetSerializedSize());
        auto packet = Create<Packet>(source.packetBytes - header.GetSerializedSize());
        auto item = Create<Ipv4QueueDiscItem>(packet, Address(), 0x0800, header);
        source.arrived++;
        qdisc->Enqueue(item); // a refused packet is counted by the Drop trace
        if (!busy)
        {
            Serve();
        }
        double meanGap = source.packetBytes * 8.0 / source.rateBps;
        double gap = source.gaps ? source.gaps->GetValue() : meanGap;
        Simulator::Schedule(Seconds(gap), &Impl::Arrive, this, index);
    }

    void Serve()
    {
        Ptr<QueueDiscItem> item = qdisc->Dequeue();
        if (!item)
        {
            busy = false;
            return;
        }
        busy = true;
        int index = SourceOf(item);
        if (index >= 0)
        {
            sources[index].served++;
        }
        Simulator::Schedule(Seconds(item->GetSize() * 8.0 / linkRateBps), &Impl::Serve, this);
    }

    void OnDrop(Ptr<const QueueDiscItem> item)
    {
        int index = SourceOf(item);
        if (index >= 0)
        {
            sources[index].dropped++;
        }
    }

    void OnStored(uint32_t /*oldValue*/, uint32_t newValue)
    {
        maxStored = std::max(maxStored, newValue);
    }
};

QdiscExperiment::QdiscExperiment(const std::string& typeId, double linkRateBps, uint32_t seed)
    : m_impl(std::make_unique<Impl>())
{
    std::string error = CheckAttributes(typeId, "");
    if (!error.empty())
    {
        throw std::invalid_argument(error);
    }
    TypeId tid = TypeId::LookupByName(typeId);
    if (!tid.IsChildOf(QueueDisc::GetTypeId()) || !(linkRateBps > 0) || seed == 0)
    {
        throw std::invalid_argument("need a QueueDisc type, a positive rate and a seed >= 1");
    }
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(1);
    ObjectFactory factory;
    factory.SetTypeId(tid);
    m_impl->type = typeId;
    m_impl->qdisc = factory.Create<QueueDisc>();
    m_impl->linkRateBps = linkRateBps;
}

QdiscExperiment::~QdiscExperiment() = default;

std::string
QdiscExperiment::Set(const std::string& name, const std::string& value)
{
    std::string error = CheckAttributes(m_impl->type, name + "=" + value);
    if (error.empty() && !m_impl->qdisc->SetAttributeFailSafe(name, StringValue(value)))
    {
        error = "cannot set " + name;
    }
    return error;
}

int
QdiscExperiment::AddSource(double rateBps, uint32_t packetBytes, bool poisson)
{
    if (!(rateBps > 0) || packetBytes < 28)
    {
        throw std::invalid_argument("a source needs a rate > 0 and packets of >= 28 bytes");
    }
    Impl::Source source{rateBps, packetBytes, nullptr};
    if (poisson)
    {
        source.gaps = CreateObject<ExponentialRandomVariable>();
        source.gaps->SetAttribute("Mean", DoubleValue(packetBytes * 8.0 / rateBps));
        source.gaps->SetStream(static_cast<int64_t>(m_impl->sources.size()));
    }
    m_impl->sources.push_back(source);
    return static_cast<int>(m_impl->sources.size()) - 1;
}

void
QdiscExperiment::Run(double durationS)
{
    if (m_impl->ran)
    {
        throw std::logic_error("QdiscExperiment::Run called twice");
    }
    m_impl->ran = true;
    Impl* impl = m_impl.get();
    impl->qdisc->Initialize();
    impl->qdisc->TraceConnectWithoutContext("Drop", MakeCallback(&Impl::OnDrop, impl));
    impl->qdisc->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&Impl::OnStored, impl));
    for (std::size_t i = 0; i < impl->sources.size(); ++i)
    {
        // desynchronise the constant-rate sources: each starts at its own offset
        double offset = impl->sources[i].packetBytes * 8.0 / impl->sources[i].rateBps *
                        (static_cast<double>(i) / (impl->sources.size() + 1));
        Simulator::Schedule(Seconds(offset), &Impl::Arrive, impl, i);
    }
    Simulator::Stop(Seconds(durationS));
    Simulator::Run();
    Simulator::Destroy();
}

std::vector<double>
QdiscExperiment::ArrivedPackets() const
{
    std::vector<double> out;
    for (const auto& source : m_impl->sources)
    {
        out.push_back(source.arrived);
    }
    return out;
}

std::vector<double>
QdiscExperiment::DroppedPackets() const
{
    std::vector<double> out;
    for (const auto& source : m_impl->sources)
    {
        out.push_back(source.dropped);
    }
    return out;
}

std::vector<double>
QdiscExperiment::ServedPackets() const
{
    std::vector<double> out;
    for (const auto& source : m_impl->sources)
    {
        out.push_back(source.served);
    }
    return out;
}

uint32_t
QdiscExperiment::MaxStoredPackets() const
{
    return m_impl->maxStored;
}

} // namespace tcprepro
