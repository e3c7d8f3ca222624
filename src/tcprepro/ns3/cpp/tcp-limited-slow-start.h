// Limited slow start (RFC 3742) for any ns-3 congestion control.
//
// Source: S. Floyd, "Limited Slow-Start for TCP with Large Congestion
// Windows", RFC 3742 (2004), section 2. ns-3 3.44 does not implement it; study C
// (Baiocchi, Castellani, Vacirca, PFLDnet 2007, section IV) enables it on every
// sender.
//
// Rule (RFC 3742, section 2): in slow start, while cwnd <= max_ssthresh, the
// congestion control's own slow start applies; above max_ssthresh,
// K = int(cwnd / (0.5 max_ssthresh)) and cwnd grows by MSS/K instead of MSS,
// so that it grows by at most max_ssthresh/2 segments per RTT. RFC 3742 states
// the increase per arriving ACK and assumes one ACK per segment; this model
// counts acknowledged segments (segmentsAcked, with a fractional credit), so the
// bound of max_ssthresh/2 segments per RTT holds with delayed ACKs as well.
//
// Implementation: a decorator (tcp-congestion-decorator.h). After the inner
// IncreaseWindow, when the window was in slow start and above max_ssthresh,
// the growth is capped at the limited-slow-start increment (a decrease made by
// the inner model is kept). Congestion avoidance is untouched.
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include "tcp-congestion-decorator.h"

namespace ns3
{

class TcpLimitedSlowStart : public TcpCongestionDecorator
{
  public:
    static TypeId GetTypeId();
    TcpLimitedSlowStart() = default;
    TcpLimitedSlowStart(const TcpLimitedSlowStart& other) = default;

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
    Ptr<TcpCongestionOps> Fork() override;

  private:
    uint32_t m_maxSsThresh{100}; // segments (RFC 3742's recommended 100)
    double m_credit{0.0};        // fractional bytes of limited growth not yet applied
};

} // namespace ns3
