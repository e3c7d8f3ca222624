// model-checks.h -- C++ drivers that exercise one ns-3 model outside a network,
// for the tests of tcprepro's models (tests/test_models_*.py).
//
// Like tcprepro.h, this header includes no ns-3 header, so cppyy parses it in
// milliseconds. Nothing here runs in a scenario: the simulations go through
// tcprepro::Simulation.
//
//  - CongestionOpsDriver feeds ACKs, RTT samples, losses and timeouts to one
//    TcpCongestionOps object (any TypeId, e.g. ns3::TcpYeah) the way
//    ns3::TcpSocketBase does (ns-3 3.44), and reports cwnd, ssthresh and the
//    model's traced state: rule-level checks of a published algorithm.
//  - QdiscExperiment offers packets from constant-rate or Poisson sources to
//    one queue disc served at a fixed rate, and counts per source what arrived,
//    was dropped and was served, and the largest number of stored packets.
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tcprepro
{

class CongestionOpsDriver
{
  public:
    /// A congestion control of ns-3 type `type_id` on a connection with
    /// `segment_bytes` segments, a window of `cwnd_segments` and ssthresh of
    /// `ssthresh_segments`, in the Open state.
    CongestionOpsDriver(const std::string& type_id,
                        uint32_t segment_bytes,
                        uint32_t cwnd_segments,
                        uint32_t ssthresh_segments);
    ~CongestionOpsDriver();
    CongestionOpsDriver(const CongestionOpsDriver&) = delete;
    CongestionOpsDriver& operator=(const CongestionOpsDriver&) = delete;

    /// Set one ns-3 attribute of the model (before the first ACK); "" or an error.
    std::string Set(const std::string& name, const std::string& value);
    /// One cumulative ACK of `segments` new segments carrying an RTT sample
    /// `rtt_s` (the smoothed RTT is set to the same value); the sender then
    /// fills the window again.
    void Ack(uint32_t segments, double rtt_s);
    /// ACK the window in flight (the segments sent before this call), in ACKs of
    /// `segments_per_ack` segments all carrying `rtt_s`: one round trip.
    void Round(double rtt_s, uint32_t segments_per_ack);
    /// A loss detected by three duplicate ACKs, then the end of the recovery:
    /// ssthresh from the model, cwnd = ssthresh. Returns ssthresh (bytes).
    uint32_t Loss();
    /// A retransmission timeout: ssthresh from the model, cwnd = 1 segment, Open again.
    void Timeout();

    uint32_t CwndBytes() const;
    uint32_t SsThreshBytes() const;
    /// Last value a traced value of the model took (NaN: it never changed).
    double State(const std::string& trace_source) const;

    struct Impl;

  private:
    std::unique_ptr<Impl> m_impl;
};

class QdiscExperiment
{
  public:
    /// Queue disc of ns-3 type `type_id` emptied at `link_rate_bps`; `seed`
    /// seeds ns-3's random streams. Throws std::invalid_argument on a bad type.
    QdiscExperiment(const std::string& type_id, double link_rate_bps, uint32_t seed);
    ~QdiscExperiment();
    QdiscExperiment(const QdiscExperiment&) = delete;
    QdiscExperiment& operator=(const QdiscExperiment&) = delete;

    /// Set one ns-3 attribute of the queue disc (before Run); "" or an error.
    std::string Set(const std::string& name, const std::string& value);
    /// A source of `packet_bytes` IPv4 packets at mean rate `rate_bps`, evenly
    /// spaced or as a Poisson process; returns its index.
    int AddSource(double rate_bps, uint32_t packet_bytes, bool poisson);
    /// Run for `duration_s` simulated seconds (once).
    void Run(double duration_s);

    std::vector<double> ArrivedPackets() const;
    std::vector<double> DroppedPackets() const;
    std::vector<double> ServedPackets() const;
    /// Largest number of packets the queue disc held at once.
    uint32_t MaxStoredPackets() const;

    struct Impl;

  private:
    std::unique_ptr<Impl> m_impl;
};

} // namespace tcprepro
