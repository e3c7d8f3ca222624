// YeAH-TCP as written in the paper (section III), next to ns-3's ns3::TcpYeah.
//
// Source: A. Baiocchi, A. P. Castellani, F. Vacirca, "YeAH-TCP: Yet Another
// Highspeed TCP", PFLDnet 2007, section III (seed 003 of the catalogue).
//
// Rules (paper, section III), evaluated once per window of data (about one RTT):
//   RTT_base  = minimum RTT measured by the sender;
//   RTT_min   = minimum RTT of the current window of data;
//   RTT_queue = RTT_min - RTT_base,  Q = RTT_queue * cwnd / RTT_min  (packets),
//   L = RTT_queue / RTT_base;
//   "Fast" mode when Q < Q_max and L < 1/phi: Scalable TCP increase;
//   otherwise "Slow" mode: Reno increase, and, when Q > Q_max and
//   cwnd > count_reno, precautionary decongestion: cwnd -= Q (not below
//   count_reno) and ssthresh = cwnd/2;
//   count_reno: cwnd/2 at start-up, +1 per RTT in Slow mode, halved on a loss,
//   reset to cwnd/2 when count_fast (RTTs in Fast mode) exceeds a threshold
//   (count_fast then restarts from 0);
//   three duplicate ACKs: cwnd -= min(max(cwnd/8, Q), cwnd/2), or cwnd/2 when
//   competing with Reno, i.e. when the number of consecutive RTTs spent in Slow
//   mode reached a threshold.
// The paper names Q_max and phi but gives no values and leaves both thresholds
// unnamed; the values used here are the defaults of the authors' Linux module
// tcp_yeah, as carried by ns3::TcpYeah: Q_max = 80 packets (Alpha), phi = 8
// (Phy), Reno-competition threshold 16 consecutive Slow RTTs (Rho), count_fast
// threshold 50 (Zeta), loss floor cwnd/2^3 (Delta = 3), Scalable increase of one
// segment per min(cwnd, 100) ACKed segments, i.e. 0.01 per ACK (StcpAiFactor).
// The attribute names are those of ns3::TcpYeah so a scenario can switch model.
//
// Trace sources: FastMode (1 = Fast, 0 = Slow), Queue (Q, packets), RenoCount
// (count_reno, segments), SlowRounds (consecutive Slow RTTs).
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include "ns3/nstime.h"
#include "ns3/sequence-number.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/traced-value.h"

#include <limits>

namespace ns3
{

class TcpYeahPaper : public TcpNewReno
{
  public:
    static TypeId GetTypeId();
    TcpYeahPaper() = default;
    TcpYeahPaper(const TcpYeahPaper& other);

    std::string GetName() const override;
    void Init(Ptr<TcpSocketState> tcb) override;
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override;
    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override;
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
    Ptr<TcpCongestionOps> Fork() override;

  private:
    void EndOfRound(Ptr<TcpSocketState> tcb);
    void ScalableIncrease(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked);

    // parameters (ns3::TcpYeah names)
    double m_qMax{80.0};
    double m_phi{8.0};
    uint32_t m_rho{16};
    uint32_t m_zeta{50};
    uint32_t m_delta{3};
    double m_stcpAckCount{100.0};

    // state
    Time m_baseRtt{Time::Max()};
    Time m_roundMinRtt{Time::Max()};
    SequenceNumber32 m_roundEnd{0};
    bool m_roundOpen{false};
    bool m_started{false};
    uint32_t m_fastRounds{0};
    uint32_t m_ackCount{0};
    // traced state: NaN until known (Init publishes the start-up mode)
    TracedValue<double> m_fastMode{std::numeric_limits<double>::quiet_NaN()};
    TracedValue<double> m_queue{std::numeric_limits<double>::quiet_NaN()};
    TracedValue<double> m_renoCount{std::numeric_limits<double>::quiet_NaN()};
    TracedValue<double> m_slowRounds{std::numeric_limits<double>::quiet_NaN()};
};

} // namespace ns3
