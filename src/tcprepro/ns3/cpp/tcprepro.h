// tcprepro.h -- the C++ interface the Python backend calls through cppyy.
//
// This header deliberately includes no ns-3 header: cppyy parses it in a few
// milliseconds, so a process that only runs tcprepro simulations never pays the
// 10-20 s that `from ns import ns` spends parsing every ns-3 module header.
// The implementation (simulation.cc, topology.cc, applications.cc, traces.cc
// and the model sources next to them) is compiled once per environment against
// the headers and libraries of the PyPI `ns3` wheel, and loaded as a shared
// library.
//
// Python describes a scenario by calling the builder methods below; C++ owns
// every per-packet action (applications, trace sinks, samplers) and stores the
// traces in plain arrays that Python reads once, after the run.
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tcprepro
{

/// One direction of a full-duplex point-to-point link.
struct DirectionSpec
{
    double rate_bps = 0;             ///< transmission rate of the sending device
    double delay_s = 0;              ///< one-way propagation delay of this direction
    std::string qdisc_type;          ///< ns-3 TypeId of the root queue disc
    std::string qdisc_attributes;    ///< "Name=Value|Name=Value" set on the queue disc
    uint32_t device_queue_pkts = 1;  ///< packets the device itself may hold (below the qdisc)
    double loss_rate = 0;            ///< random loss: probability that a packet is corrupted
    std::string trace_name;          ///< non-empty: sample queue, drops and tx bytes under this name
};

/// One TCP flow (bulk or sized transfer) from src to dst.
struct FlowSpec
{
    std::string name;
    int src = -1;                    ///< node index returned by AddNode
    int dst = -1;
    std::string cc_type;             ///< ns-3 TypeId of the congestion control
    std::string cc_attributes;       ///< "Name=Value|..." set on the congestion control object
    std::string socket_attributes;   ///< "Name=Value|..." set on the sending socket
    double start_s = 0;
    uint64_t bytes = 0;              ///< 0: bulk (unlimited) flow
    bool pacing = false;             ///< enable ns-3 TCP pacing on the sending socket
    int group = -1;                  ///< AddGroup index: counted in that group's series only
    uint32_t max_ssthresh_pkts = 0;  ///< > 0: limited slow start (RFC 3742) above this cwnd
    double max_pacing_bps = 0;       ///< > 0: pace (after the initial window) at most at this rate
    int ss_counting = 0;             ///< slow-start growth counts: 0 the model's own rule, 1 ACKs, 2 segments
    int ca_counting = 0;             ///< congestion-avoidance growth counts (as ss_counting)
    uint32_t ss_ack_limit = 0;       ///< ss_counting 2: most segments one ACK adds in slow start (0: any)
    bool host_cache = false;         ///< seed ssthresh from, and store it into, the host cache
    uint64_t request_bytes = 0;      ///< > 0: the receiver sends this request first; data follows it
    // A UDP Poisson packet source instead of a TCP connection:
    bool udp = false;
    double rate_bps = 0;             ///< mean on-the-wire rate of the IP packets
    uint32_t packet_bytes = 0;       ///< IP packet size (UDP/IP headers included)
    double stop_s = 0;               ///< the source stops sending at this time
};

/// Validate a TypeId name and an attribute string without creating anything
/// that could abort the process. Returns "" when valid, else a message.
std::string CheckAttributes(const std::string& type_id, const std::string& attributes);

/// The ns-3 version string of the libraries this library was built against.
std::string Ns3Version();

/// A single ns-3 simulation. Only one may exist at a time (ns-3's simulator
/// is a process-wide singleton); the destructor calls Simulator::Destroy(), so
/// a process can run many simulations one after the other.
class Simulation
{
  public:
    Simulation(uint32_t seed, uint32_t run);
    ~Simulation();
    Simulation(const Simulation&) = delete;
    Simulation& operator=(const Simulation&) = delete;

    /// Config::SetDefault, checked: throws std::invalid_argument on a bad value.
    void SetDefault(const std::string& path, const std::string& value);
    int AddNode(const std::string& name);
    /// "Name=Value|..." TcpSocket attributes of every socket of a node: those its flows
    /// send from (before each flow's own socket_attributes) and those it accepts (a
    /// host with another stack, e.g. its delayed ACKs). Call before Build.
    void SetNodeSocketAttributes(int node, const std::string& attributes);
    /// A full-duplex link with independent rate, delay and queue per direction.
    void AddLink(int node_a, int node_b, const DirectionSpec& a_to_b, const DirectionSpec& b_to_a);
    /// A named group of flows (a traffic generator): its members are not sampled one by
    /// one; the group's summed counters form one series entity.
    int AddGroup(const std::string& name);
    int AddFlow(const FlowSpec& flow);
    /// Also sample the traced value `source` of every flow's congestion control
    /// (e.g. "DelayWindow" of ns3::TcpCompound) with the other per-flow series,
    /// read back as FlowSeries("cc:" + source); NaN where a flow's model has no
    /// such source or the flow has not started. Call before RunUntil.
    void SampleCongestionState(const std::string& source);
    /// Populate routing, install sinks and the sampler. Call once, before RunUntil.
    void Build(double sample_interval_s);
    /// Advance the simulation up to and including time t_s (can be called repeatedly).
    void RunUntil(double t_s);
    double Now() const;

    // ---- results (valid after RunUntil) ----
    std::vector<double> SampleTimes() const;
    /// Every flow, in AddFlow order (the order of FlowScalars).
    std::vector<std::string> FlowNames() const;
    /// Entities of FlowSeries: ungrouped flows in AddFlow order, then groups.
    std::vector<std::string> SeriesNames() const;
    std::vector<std::string> LinkNames() const;
    /// Row-major [sample][entity] series (entities: SeriesNames()): rx_bytes, cwnd_bytes, rtt_sum_s, rtt_count,
    /// tx_data_pkts, retx_pkts, lost_data_pkts, lost_ack_pkts, random_lost_pkts,
    /// unacked_byte_s (time integral of the unacknowledged bytes), rto_count (RTO expiries)
    /// (counters are cumulative; lost_* count queue drops, random_lost_pkts the data
    /// segments the random-loss model destroyed); backlog_pkts (data packets of the
    /// flow stored in traced PFQ/LQD queue discs, only when a traced link has one);
    /// cc:<source> (see SampleCongestionState).
    std::vector<double> FlowSeries(const std::string& var) const;
    /// Row-major [sample][link] series: queue_pkts, queue_bytes, drops_pkts, tx_bytes,
    /// random_drops_pkts (all but the queue occupancy cumulative).
    std::vector<double> LinkSeries(const std::string& var) const;
    /// Per-flow scalars: start_s, connected_s, end_s (NaN while running), bytes, rx_bytes,
    /// tx_data_pkts and lost_data_pkts (whole-run totals of the flow's own socket),
    /// initial_ssthresh_bytes (the host cache's seed; NaN: unbounded).
    std::vector<double> FlowScalars(const std::string& var) const;
    /// TypeId name of the congestion control each flow's socket actually uses
    /// ("" before the flow started).
    std::vector<std::string> FlowCongestionTypes() const;
    /// Per-link scalars: queue_max_pkts, rate_bps, delay_s.
    std::vector<double> LinkScalars(const std::string& var) const;
    /// Wall-clock-free counters of the event loop: number of events executed.
    uint64_t EventCount() const;

    struct Impl; ///< opaque implementation (simulation-impl.h)

  private:
    std::unique_ptr<Impl> m_impl;
};

} // namespace tcprepro
