// A congestion control that wraps another one ("inner") and forwards every call to it.
//
// Decorators change one aspect of any ns-3 congestion control without copying it:
// TcpLimitedSlowStart caps slow-start growth (RFC 3742), TcpAckCounting decides what
// the window growth counts (ACKs or acknowledged segments, as the testbed's stack
// did). Each overrides what it changes; this base forwards the rest, so the inner
// model keeps all its state (round tracking, HyStart, YeAH's queue estimate, ...).
// Decorators nest: the outer one's inner may be another decorator.
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include "ns3/tcp-congestion-ops.h"

namespace ns3
{

class TcpCongestionDecorator : public TcpCongestionOps
{
  public:
    static TypeId GetTypeId();
    TcpCongestionDecorator() = default;
    TcpCongestionDecorator(const TcpCongestionDecorator& other);

    /// The congestion control this one wraps (required before use).
    void SetInner(Ptr<TcpCongestionOps> inner);
    Ptr<TcpCongestionOps> GetInner() const;
    /// The innermost congestion control, through every nested decorator.
    static Ptr<TcpCongestionOps> Innermost(Ptr<TcpCongestionOps> ops);

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

  protected:
    Ptr<TcpCongestionOps> m_inner;
};

} // namespace ns3
