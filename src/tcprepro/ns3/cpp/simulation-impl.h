// simulation-impl.h -- internal declarations shared by the translation units
// that implement tcprepro::Simulation. Not an interface: Python (through cppyy)
// and benchmarks/replay.cc see only tcprepro.h, which includes no ns-3 header.
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
// Where:
//  - simulation.cc   attribute parsing, the Simulation's life cycle, flows,
//                    Build and the event loop;
//  - topology.cc     nodes, links (devices, channels, queue discs, random
//                    loss) and groups;
//  - applications.cc FlowSender, PoissonSender, FlowSink;
//  - traces.cc       trace sinks, the periodic sampler and the result getters.
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include "tcprepro.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tcprepro
{

// Only the Simulation sources include this header; they all use ns-3 unqualified.
using namespace ns3;

inline constexpr uint32_t kUdpIpHeaderBytes = 28;
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Split "Name=Value|Name=Value" into pairs; throws std::invalid_argument on a
/// malformed item (simulation.cc).
std::vector<std::pair<std::string, std::string>> ParseAttributes(const std::string& attributes);

/// A factory for `type` with `attributes` set, checked first by CheckAttributes;
/// throws std::invalid_argument (simulation.cc).
ObjectFactory MakeFactory(const std::string& type, const std::string& attributes);

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
    double initialSsthreshBytes = kNaN; ///< seeded from the host cache (NaN: unbounded)
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
    void OnRequest(Ptr<Socket> socket);
    void StartSending(Ptr<Socket> socket);
    /// Host cache: this connection's ssthresh into the cache once all its data is acked.
    void StoreInHostCache();

    Simulation::Impl* m_sim;
    int m_flowId;
    Ptr<Socket> m_socket;
    uint64_t m_remaining = 0;
    uint64_t m_requestReceived = 0;
    bool m_sending = false;
    bool m_closed = false;
    bool m_cached = false;
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

/// What a host cache keeps of a closed connection for its destination (FreeBSD's
/// tcp_hostcache, Linux's route metrics): the slow-start threshold, averaged with what
/// the entry held.
struct HostCacheEntry
{
    uint32_t ssthreshBytes = 0; ///< 0: no loss seen, nothing to seed
};

struct Simulation::Impl
{
    NodeContainer nodes;
    std::vector<std::string> nodeNames;
    std::vector<std::string> nodeSocketAttributes; ///< per node index ("" when none)
    std::map<std::pair<uint32_t, uint32_t>, HostCacheEntry> hostCache; ///< (src node id, dst IPv4)
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

// Trace sinks of one traced link direction `link` (index in Impl::links),
// connected by Simulation::AddLink (traces.cc).
void CountTxBytes(Simulation::Impl* sim, size_t link, Ptr<const Packet> packet);
void CountRandomDrop(Simulation::Impl* sim, size_t link, Ptr<const Packet> packet);
void TrackMaxQueue(Simulation::Impl* sim, size_t link, uint32_t oldValue, uint32_t newValue);

} // namespace tcprepro
