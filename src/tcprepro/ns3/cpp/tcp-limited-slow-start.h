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
// Implementation: a decorator. TcpLimitedSlowStart forwards every call to the
// wrapped ("inner") congestion control, so the inner model keeps all its state
// (round tracking, HyStart, YeAH's queue estimate, ...); after the inner
// IncreaseWindow, when the window was in slow start and above max_ssthresh,
// the growth is capped at the limited-slow-start increment (a decrease made by
// the inner model is kept). Congestion avoidance is untouched.
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include "ns3/tcp-congestion-ops.h"

namespace ns3
{

class TcpLimitedSlowStart : public TcpCongestionOps
{
  public:
    static TypeId GetTypeId();
    TcpLimitedSlowStart() = default;
    TcpLimitedSlowStart(const TcpLimitedSlowStart& other);

    /// The congestion control whose slow start is limited (required before use).
    void SetInner(Ptr<TcpCongestionOps> inner);
    Ptr<TcpCongestionOps> GetInner() const;

    std::string GetName() const override;
    void Init(Ptr<TcpSocketState> tcb) override;
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override;
    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override;
    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override;
    bool HasCongControl() const override;
    void CongControl(Ptr<TcpSocketState> tcb,
                     const TcpRateOps::TcpRateConnection& rc,
                     const TcpRateOps::TcpRateSample& rs) override;
    Ptr<TcpCongestionOps> Fork() override;

  private:
    Ptr<TcpCongestionOps> m_inner;
    uint32_t m_maxSsThresh{100}; // segments (RFC 3742's recommended 100)
    double m_credit{0.0};        // fractional bytes of limited growth not yet applied
};

} // namespace ns3
