// TCP Hybla: Reno's growth scaled so that a long-RTT flow grows as a flow of a
// reference RTT would.
//
// Sources: C. Caini, R. Firrincieli, "TCP Hybla: a TCP enhancement for
// heterogeneous networks", International Journal of Satellite Communications
// and Networking 22(5), 2004; the behaviour of Linux's tcp_hybla module (which
// the ns-2 TCP-Linux of study B's thesis ran), as documented in its comments.
//
// Rules, per ACK received (the paper's equations):
//     rho = max(RTT / RTT0, 1)
//     slow start:           cwnd += 2^rho - 1   segments
//     congestion avoidance: cwnd += rho^2 / cwnd segments
//     on loss:              ssthresh = max(2 MSS, FlightSize / 2) (Reno's)
// The RTT is the smallest smoothed RTT seen so far, and rho is recomputed each
// time it decreases (as Linux does); RTT0 = 25 ms (the paper's and Linux's
// rtt0). Fractions of a segment accumulate until they make a whole one. A
// slow-start increase stops at ssthresh (Linux clamps it there).
//
// Why not ns3::TcpHybla: ns-3 3.44 recomputes rho only on an ACK whose RTT
// argument equals the socket's minimum RTT sample; the socket passes its
// smoothed RTT there, which in a simulation never equals the minimum raw
// sample, so rho stays 1 and ns-3's Hybla is Reno with a per-ACK slow start
// (docs/variants.md, "Hybla: ns-3 model and the published algorithm").
//
// Differences from Linux's module, stated: the initial window is the
// scenario's (Linux's module sets cwnd = rho when the connection starts), and
// the arithmetic is in doubles, not Linux's 1/128 fixed point.
//
// Trace source: Rho (the scaling factor in force).
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include "ns3/nstime.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/traced-value.h"

namespace ns3
{

class TcpHyblaMinRtt : public TcpNewReno
{
  public:
    static TypeId GetTypeId();
    TcpHyblaMinRtt() = default;
    TcpHyblaMinRtt(const TcpHyblaMinRtt& other);

    std::string GetName() const override;
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override;
    Ptr<TcpCongestionOps> Fork() override;

  private:
    Time m_rtt0{MilliSeconds(25)};   //!< reference RTT (RTT0)
    Time m_minRtt{Time::Max()};      //!< smallest smoothed RTT seen
    TracedValue<double> m_rho{1.0};  //!< max(minRTT / RTT0, 1)
    double m_fraction{0.0};          //!< increase not yet turned into whole segments
};

} // namespace ns3
