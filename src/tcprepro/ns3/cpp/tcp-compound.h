// Compound TCP (CTCP): a loss-based window (Reno) plus a delay-based window.
//
// Source: K. Tan, J. Song, Q. Zhang, M. Sridharan, "A Compound TCP Approach for
// High-speed and Long Distance Networks", IEEE INFOCOM 2006, and M. Sridharan,
// K. Tan, D. Bansal, D. Thaler, "Compound TCP: A New TCP Congestion Control for
// High-Speed and Long Distance Networks", draft-sridharan-tcpm-ctcp-02 (2008).
//
// Control law (facts from the draft, sections 2, 3 and 6):
//   win = cwnd + dwnd (the receiver window is handled by the socket);
//   slow start as standard TCP with dwnd = 0; dwnd only acts in congestion avoidance;
//   per ACK in congestion avoidance: cwnd += 1/win              (eq. 2)
//   once per round (one window of data ACKed), with
//     diff = (win/baseRTT - win/sRTT) * baseRTT                  (backlog, packets)
//     dwnd += (alpha * win^k - 1)+   if diff <  gamma            (eq. 3, win^k as in the paper)
//     dwnd  = (dwnd - eta * diff)+   if diff >= gamma            (eq. 4)
//   on a loss detected by duplicate ACKs: cwnd = win_loss/2 and
//     dwnd = (win * (1 - beta) - cwnd/2)+                       (paper; eq. 5 of the draft)
//   on a retransmission timeout: dwnd = 0 and baseRTT is measured again;
//   below Low_Window (38 packets) the delay component is off: standard TCP.
// Parameters (draft sections 3-5): alpha = 1/8, beta = 1/2, eta = 1, k = 0.75,
// gamma = 30 packets (fixed; the draft's "tuning by emulation" of gamma is not
// modelled: its EWMA weight lambda is not specified), Low_Window = 38 packets.
//
// Modelling choices (not fixed by the sources): the window tested against
// Low_Window is win; baseRTT is the minimum of the per-ACK RTT samples taken
// outside loss recovery; FlightSize stands for win in the loss rule (RFC 5681,
// as ns3::TcpNewReno), so that with dwnd = 0 the model is exactly
// ns3::TcpNewReno (a test compares the cwnd traces).
//
// Trace sources: DelayWindow (dwnd, segments) and Backlog (diff, segments) for tests.
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

class TcpCompound : public TcpNewReno
{
  public:
    static TypeId GetTypeId();
    TcpCompound() = default;
    TcpCompound(const TcpCompound& other);

    std::string GetName() const override;
    void Init(Ptr<TcpSocketState> tcb) override;
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override;
    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override;
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
    Ptr<TcpCongestionOps> Fork() override;

  private:
    /// End of a round in congestion avoidance: update dwnd from the backlog estimate.
    void UpdateDelayWindow(Ptr<TcpSocketState> tcb);
    void SetDelayWindow(uint32_t bytes, uint32_t segmentSize);

    // parameters
    double m_alpha{0.125};
    double m_beta{0.5};
    double m_k{0.75};
    double m_gamma{30.0};
    double m_eta{1.0};
    double m_lowWindow{38.0};

    // state
    uint32_t m_dwndBytes{0};
    Time m_baseRtt{Time::Max()};
    SequenceNumber32 m_roundEnd{0};
    bool m_roundOpen{false};
    // traced state: NaN until known (Init publishes dwnd = 0)
    TracedValue<double> m_dwndTrace{std::numeric_limits<double>::quiet_NaN()};    //!< segments
    TracedValue<double> m_backlogTrace{std::numeric_limits<double>::quiet_NaN()}; //!< segments
};

} // namespace ns3
