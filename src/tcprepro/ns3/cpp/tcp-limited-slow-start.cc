// Limited slow start (RFC 3742) as a decorator (see tcp-limited-slow-start.h).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "tcp-limited-slow-start.h"

#include "ns3/abort.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/uinteger.h"

#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TcpLimitedSlowStart);

TypeId
TcpLimitedSlowStart::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TcpLimitedSlowStart")
            .SetParent<TcpCongestionOps>()
            .SetGroupName("Tcprepro")
            .AddConstructor<TcpLimitedSlowStart>()
            .AddAttribute("MaxSsThresh",
                          "max_ssthresh of RFC 3742 (segments); >= 2",
                          UintegerValue(100),
                          MakeUintegerAccessor(&TcpLimitedSlowStart::m_maxSsThresh),
                          MakeUintegerChecker<uint32_t>(2));
    return tid;
}

TcpLimitedSlowStart::TcpLimitedSlowStart(const TcpLimitedSlowStart& other)
    : TcpCongestionOps(other),
      m_inner(other.m_inner ? other.m_inner->Fork() : nullptr),
      m_maxSsThresh(other.m_maxSsThresh),
      m_credit(other.m_credit)
{
}

void
TcpLimitedSlowStart::SetInner(Ptr<TcpCongestionOps> inner)
{
    m_inner = inner;
}

Ptr<TcpCongestionOps>
TcpLimitedSlowStart::GetInner() const
{
    return m_inner;
}

std::string
TcpLimitedSlowStart::GetName() const
{
    return m_inner ? m_inner->GetName() : "TcpLimitedSlowStart";
}

void
TcpLimitedSlowStart::Init(Ptr<TcpSocketState> tcb)
{
    NS_ABORT_MSG_UNLESS(m_inner, "TcpLimitedSlowStart needs an inner congestion control");
    m_inner->Init(tcb);
}

uint32_t
TcpLimitedSlowStart::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    return m_inner->GetSsThresh(tcb, bytesInFlight);
}

void
TcpLimitedSlowStart::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    const uint32_t before = tcb->m_cWnd.Get();
    const bool slowStart = before < tcb->m_ssThresh.Get();
    const uint32_t mss = tcb->m_segmentSize;
    const uint64_t maxSsBytes = static_cast<uint64_t>(m_maxSsThresh) * mss;
    m_inner->IncreaseWindow(tcb, segmentsAcked);
    if (!slowStart || before <= maxSsBytes)
    {
        m_credit = 0.0;
        return;
    }
    // K = int(cwnd / (0.5 max_ssthresh)) >= 2 here; cwnd += MSS/K per ACKed segment
    const auto k = static_cast<uint32_t>(2 * static_cast<uint64_t>(before) / maxSsBytes);
    m_credit += static_cast<double>(segmentsAcked) * mss / k;
    const auto grow = static_cast<uint32_t>(std::floor(m_credit));
    m_credit -= grow;
    const uint32_t limited = before + grow;
    if (tcb->m_cWnd.Get() > limited)
    {
        tcb->m_cWnd = limited;
    }
}

void
TcpLimitedSlowStart::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt)
{
    m_inner->PktsAcked(tcb, segmentsAcked, rtt);
}

void
TcpLimitedSlowStart::CongestionStateSet(Ptr<TcpSocketState> tcb,
                                        const TcpSocketState::TcpCongState_t newState)
{
    m_inner->CongestionStateSet(tcb, newState);
}

void
TcpLimitedSlowStart::CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event)
{
    m_inner->CwndEvent(tcb, event);
}

bool
TcpLimitedSlowStart::HasCongControl() const
{
    return m_inner->HasCongControl();
}

void
TcpLimitedSlowStart::CongControl(Ptr<TcpSocketState> tcb,
                                 const TcpRateOps::TcpRateConnection& rc,
                                 const TcpRateOps::TcpRateSample& rs)
{
    m_inner->CongControl(tcb, rc, rs);
}

Ptr<TcpCongestionOps>
TcpLimitedSlowStart::Fork()
{
    return CopyObject<TcpLimitedSlowStart>(this);
}

} // namespace ns3
