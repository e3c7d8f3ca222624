// Limited slow start (RFC 3742) as a decorator (see tcp-limited-slow-start.h).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "tcp-limited-slow-start.h"

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
            .SetParent<TcpCongestionDecorator>()
            .SetGroupName("Tcprepro")
            .AddConstructor<TcpLimitedSlowStart>()
            .AddAttribute("MaxSsThresh",
                          "max_ssthresh of RFC 3742 (segments); >= 2",
                          UintegerValue(100),
                          MakeUintegerAccessor(&TcpLimitedSlowStart::m_maxSsThresh),
                          MakeUintegerChecker<uint32_t>(2));
    return tid;
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

Ptr<TcpCongestionOps>
TcpLimitedSlowStart::Fork()
{
    return CopyObject<TcpLimitedSlowStart>(this);
}

} // namespace ns3
