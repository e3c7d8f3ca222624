// Forwarding base of the congestion-control decorators (see tcp-congestion-decorator.h).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "tcp-congestion-decorator.h"

#include "ns3/abort.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TcpCongestionDecorator);

TypeId
TcpCongestionDecorator::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TcpCongestionDecorator").SetParent<TcpCongestionOps>().SetGroupName("Tcprepro");
    return tid;
}

TcpCongestionDecorator::TcpCongestionDecorator(const TcpCongestionDecorator& other)
    : TcpCongestionOps(other),
      m_inner(other.m_inner ? other.m_inner->Fork() : nullptr)
{
}

void
TcpCongestionDecorator::SetInner(Ptr<TcpCongestionOps> inner)
{
    m_inner = inner;
}

Ptr<TcpCongestionOps>
TcpCongestionDecorator::GetInner() const
{
    return m_inner;
}

Ptr<TcpCongestionOps>
TcpCongestionDecorator::Innermost(Ptr<TcpCongestionOps> ops)
{
    while (auto decorator = DynamicCast<TcpCongestionDecorator>(ops))
    {
        ops = decorator->GetInner();
    }
    return ops;
}

std::string
TcpCongestionDecorator::GetName() const
{
    return m_inner ? m_inner->GetName() : GetInstanceTypeId().GetName();
}

void
TcpCongestionDecorator::Init(Ptr<TcpSocketState> tcb)
{
    NS_ABORT_MSG_UNLESS(m_inner, GetInstanceTypeId().GetName() << " needs an inner congestion control");
    m_inner->Init(tcb);
}

uint32_t
TcpCongestionDecorator::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    return m_inner->GetSsThresh(tcb, bytesInFlight);
}

void
TcpCongestionDecorator::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    m_inner->IncreaseWindow(tcb, segmentsAcked);
}

void
TcpCongestionDecorator::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt)
{
    m_inner->PktsAcked(tcb, segmentsAcked, rtt);
}

void
TcpCongestionDecorator::CongestionStateSet(Ptr<TcpSocketState> tcb,
                                           const TcpSocketState::TcpCongState_t newState)
{
    m_inner->CongestionStateSet(tcb, newState);
}

void
TcpCongestionDecorator::CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event)
{
    m_inner->CwndEvent(tcb, event);
}

bool
TcpCongestionDecorator::HasCongControl() const
{
    return m_inner->HasCongControl();
}

void
TcpCongestionDecorator::CongControl(Ptr<TcpSocketState> tcb,
                                    const TcpRateOps::TcpRateConnection& rc,
                                    const TcpRateOps::TcpRateSample& rs)
{
    m_inner->CongControl(tcb, rc, rs);
}

} // namespace ns3
