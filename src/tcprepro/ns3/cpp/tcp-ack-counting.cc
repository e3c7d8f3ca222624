// Window growth per ACK or per acknowledged segment, as a decorator (see tcp-ack-counting.h).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "tcp-ack-counting.h"

#include "ns3/enum.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TcpAckCounting);

TypeId
TcpAckCounting::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TcpAckCounting")
            .SetParent<TcpCongestionDecorator>()
            .SetGroupName("Tcprepro")
            .AddConstructor<TcpAckCounting>()
            .AddAttribute("SlowStart",
                          "slow start (cwnd < ssthresh): one growth step of the inner model per "
                          "ACK of new data (Ack), per acknowledged segment (Segment), or its own "
                          "rule (Model)",
                          EnumValue(TcpAckCounting::PER_SEGMENT),
                          MakeEnumAccessor<Counting>(&TcpAckCounting::m_slowStart),
                          MakeEnumChecker(TcpAckCounting::MODEL,
                                          "Model",
                                          TcpAckCounting::PER_ACK,
                                          "Ack",
                                          TcpAckCounting::PER_SEGMENT,
                                          "Segment"))
            .AddAttribute("CongestionAvoidance",
                          "congestion avoidance (cwnd >= ssthresh): as SlowStart",
                          EnumValue(TcpAckCounting::PER_SEGMENT),
                          MakeEnumAccessor<Counting>(&TcpAckCounting::m_congestionAvoidance),
                          MakeEnumChecker(TcpAckCounting::MODEL,
                                          "Model",
                                          TcpAckCounting::PER_ACK,
                                          "Ack",
                                          TcpAckCounting::PER_SEGMENT,
                                          "Segment"))
            .AddAttribute("SlowStartLimit",
                          "per segment: most segments one ACK adds in slow start (RFC 3465's "
                          "L); 0: no limit",
                          UintegerValue(0),
                          MakeUintegerAccessor(&TcpAckCounting::m_slowStartLimit),
                          MakeUintegerChecker<uint32_t>());
    return tid;
}

void
TcpAckCounting::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    const bool slowStart = tcb->m_cWnd < tcb->m_ssThresh;
    const Counting rule = slowStart ? m_slowStart : m_congestionAvoidance;
    if (segmentsAcked == 0 || rule == MODEL)
    {
        m_inner->IncreaseWindow(tcb, segmentsAcked);
        return;
    }
    if (rule == PER_ACK)
    {
        m_inner->IncreaseWindow(tcb, 1);
        return;
    }
    uint32_t steps = segmentsAcked;
    if (slowStart && m_slowStartLimit > 0)
    {
        steps = std::min(steps, m_slowStartLimit);
    }
    for (uint32_t i = 0; i < steps; ++i)
    {
        m_inner->IncreaseWindow(tcb, 1);
    }
}

Ptr<TcpCongestionOps>
TcpAckCounting::Fork()
{
    return CopyObject<TcpAckCounting>(this);
}

} // namespace ns3
