// FAST TCP (see tcp-fast.h for the sources and the parameter values).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "tcp-fast.h"

#include "ns3/double.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TcpFast);

TypeId
TcpFast::GetTypeId()
{
    const double positive = std::nextafter(0.0, 1.0);
    static TypeId tid =
        TypeId("ns3::TcpFast")
            .SetParent<TcpNewReno>()
            .SetGroupName("Tcprepro")
            .AddConstructor<TcpFast>()
            .AddAttribute("Alpha",
                          "packets of this flow kept in the queues at equilibrium; > 0",
                          DoubleValue(200.0),
                          MakeDoubleAccessor(&TcpFast::m_alpha),
                          MakeDoubleChecker<double>(positive))
            .AddAttribute("Gamma",
                          "weight of the new target in each window update, in (0, 1]",
                          DoubleValue(0.5),
                          MakeDoubleAccessor(&TcpFast::m_gamma),
                          MakeDoubleChecker<double>(positive, 1.0))
            .AddTraceSource("Backlog",
                            "estimated own backlog w*(1 - baseRTT/RTT) at the last update "
                            "(segments)",
                            MakeTraceSourceAccessor(&TcpFast::m_backlogTrace),
                            "ns3::TracedValueCallback::Double");
    return tid;
}

TcpFast::TcpFast(const TcpFast& other)
    : TcpNewReno(other),
      m_alpha(other.m_alpha),
      m_gamma(other.m_gamma),
      m_baseRtt(other.m_baseRtt),
      m_rttSumS(other.m_rttSumS),
      m_rttCount(other.m_rttCount),
      m_roundEnd(other.m_roundEnd),
      m_roundOpen(other.m_roundOpen),
      m_backlogTrace(other.m_backlogTrace)
{
}

std::string
TcpFast::GetName() const
{
    return "TcpFast";
}

Ptr<TcpCongestionOps>
TcpFast::Fork()
{
    return CopyObject<TcpFast>(this);
}

void
TcpFast::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt)
{
    Time sample = tcb->m_lastRtt.Get();
    if (tcb->m_congState != TcpSocketState::CA_OPEN || !sample.IsStrictlyPositive())
    {
        return;
    }
    m_baseRtt = std::min(m_baseRtt, sample);
    m_rttSumS += sample.GetSeconds();
    ++m_rttCount;
}

void
TcpFast::CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState)
{
    if (newState != TcpSocketState::CA_OPEN)
    {
        m_roundOpen = false;
    }
}

void
TcpFast::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    if (!m_roundOpen)
    {
        m_roundOpen = true;
        m_roundEnd = tcb->m_nextTxSequence;
        m_rttSumS = 0;
        m_rttCount = 0;
        return;
    }
    if (tcb->m_lastAckedSeq < m_roundEnd || m_rttCount == 0 || m_baseRtt == Time::Max())
    {
        return;
    }
    const uint32_t mss = tcb->m_segmentSize;
    const double window = static_cast<double>(tcb->m_cWnd.Get()) / mss;
    const double meanRtt = m_rttSumS / m_rttCount;
    const double ratio = std::min(1.0, m_baseRtt.GetSeconds() / meanRtt);
    const double target = (1.0 - m_gamma) * window + m_gamma * (ratio * window + m_alpha);
    const double next = std::max(2.0, std::min(2.0 * window, target));
    m_backlogTrace = window * (1.0 - ratio);
    tcb->m_cWnd = static_cast<uint32_t>(std::lround(next * mss));
    m_roundEnd = tcb->m_nextTxSequence;
    m_rttSumS = 0;
    m_rttCount = 0;
}

uint32_t
TcpFast::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    return std::max(2 * tcb->m_segmentSize, bytesInFlight / 2);
}

} // namespace ns3
