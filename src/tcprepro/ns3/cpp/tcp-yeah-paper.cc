// YeAH-TCP after the paper's section III (see tcp-yeah-paper.h).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "tcp-yeah-paper.h"

#include "ns3/double.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TcpYeahPaper);

TypeId
TcpYeahPaper::GetTypeId()
{
    const double positive = std::nextafter(0.0, 1.0);
    static TypeId tid =
        TypeId("ns3::TcpYeahPaper")
            .SetParent<TcpNewReno>()
            .SetGroupName("Tcprepro")
            .AddConstructor<TcpYeahPaper>()
            .AddAttribute("Alpha",
                          "Q_max: packets one flow may keep queued in Fast mode; > 0",
                          DoubleValue(80.0),
                          MakeDoubleAccessor(&TcpYeahPaper::m_qMax),
                          MakeDoubleChecker<double>(positive))
            .AddAttribute("Phy",
                          "phi: Fast mode needs RTT_queue/RTT_base < 1/phi; > 0",
                          DoubleValue(8.0),
                          MakeDoubleAccessor(&TcpYeahPaper::m_phi),
                          MakeDoubleChecker<double>(positive))
            .AddAttribute("Rho",
                          "consecutive Slow-mode RTTs that reveal competing Reno flows; >= 1",
                          UintegerValue(16),
                          MakeUintegerAccessor(&TcpYeahPaper::m_rho),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Zeta",
                          "Fast-mode RTTs after which count_reno is reset to cwnd/2; >= 1",
                          UintegerValue(50),
                          MakeUintegerAccessor(&TcpYeahPaper::m_zeta),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Delta",
                          "loss rule floor: cwnd/2^Delta; 1..31",
                          UintegerValue(3),
                          MakeUintegerAccessor(&TcpYeahPaper::m_delta),
                          MakeUintegerChecker<uint32_t>(1, 31))
            .AddAttribute("StcpAiFactor",
                          "Fast mode: one segment per min(cwnd, StcpAiFactor) ACKed segments; > 0",
                          DoubleValue(100.0),
                          MakeDoubleAccessor(&TcpYeahPaper::m_stcpAckCount),
                          MakeDoubleChecker<double>(positive))
            .AddTraceSource("FastMode",
                            "1 in Fast mode, 0 in Slow mode",
                            MakeTraceSourceAccessor(&TcpYeahPaper::m_fastMode),
                            "ns3::TracedValueCallback::Double")
            .AddTraceSource("Queue",
                            "queue estimate Q of the last round (packets)",
                            MakeTraceSourceAccessor(&TcpYeahPaper::m_queue),
                            "ns3::TracedValueCallback::Double")
            .AddTraceSource("RenoCount",
                            "count_reno (segments)",
                            MakeTraceSourceAccessor(&TcpYeahPaper::m_renoCount),
                            "ns3::TracedValueCallback::Double")
            .AddTraceSource("SlowRounds",
                            "consecutive RTTs spent in Slow mode",
                            MakeTraceSourceAccessor(&TcpYeahPaper::m_slowRounds),
                            "ns3::TracedValueCallback::Double");
    return tid;
}

TcpYeahPaper::TcpYeahPaper(const TcpYeahPaper& other)
    : TcpNewReno(other),
      m_qMax(other.m_qMax),
      m_phi(other.m_phi),
      m_rho(other.m_rho),
      m_zeta(other.m_zeta),
      m_delta(other.m_delta),
      m_stcpAckCount(other.m_stcpAckCount),
      m_baseRtt(other.m_baseRtt),
      m_roundMinRtt(other.m_roundMinRtt),
      m_roundEnd(other.m_roundEnd),
      m_roundOpen(other.m_roundOpen),
      m_started(other.m_started),
      m_fastRounds(other.m_fastRounds),
      m_ackCount(other.m_ackCount),
      m_fastMode(other.m_fastMode),
      m_queue(other.m_queue),
      m_renoCount(other.m_renoCount),
      m_slowRounds(other.m_slowRounds)
{
}

std::string
TcpYeahPaper::GetName() const
{
    return "TcpYeahPaper";
}

Ptr<TcpCongestionOps>
TcpYeahPaper::Fork()
{
    return CopyObject<TcpYeahPaper>(this);
}

void
TcpYeahPaper::Init(Ptr<TcpSocketState> tcb)
{
    if (std::isnan(m_fastMode.Get()))
    {
        m_fastMode = 1; // start in Fast mode (count_reno is set at the first round)
        m_slowRounds = 0;
    }
}

void
TcpYeahPaper::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt)
{
    Time sample = tcb->m_lastRtt.Get();
    if (tcb->m_congState != TcpSocketState::CA_OPEN || !sample.IsStrictlyPositive())
    {
        return;
    }
    m_baseRtt = std::min(m_baseRtt, sample);
    m_roundMinRtt = std::min(m_roundMinRtt, sample);
}

void
TcpYeahPaper::CongestionStateSet(Ptr<TcpSocketState> tcb,
                                 const TcpSocketState::TcpCongState_t newState)
{
    if (newState != TcpSocketState::CA_OPEN)
    {
        m_roundOpen = false;
    }
}

void
TcpYeahPaper::ScalableIncrease(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    const uint32_t cwnd = std::max(tcb->GetCwndInSegments(), 1U);
    const double perSegment = std::min(static_cast<double>(cwnd), m_stcpAckCount);
    m_ackCount += segmentsAcked;
    if (m_ackCount >= perSegment)
    {
        const auto grow = static_cast<uint32_t>(std::floor(m_ackCount / perSegment));
        m_ackCount = 0;
        tcb->m_cWnd = (cwnd + grow) * tcb->m_segmentSize;
    }
}

void
TcpYeahPaper::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    if (tcb->m_cWnd < tcb->m_ssThresh)
    {
        TcpNewReno::SlowStart(tcb, segmentsAcked);
    }
    else if (m_fastMode.Get() == 1.0)
    {
        ScalableIncrease(tcb, segmentsAcked);
    }
    else
    {
        TcpNewReno::CongestionAvoidance(tcb, segmentsAcked);
    }

    if (!m_roundOpen)
    {
        m_roundOpen = true;
        m_roundEnd = tcb->m_nextTxSequence;
        m_roundMinRtt = Time::Max();
        return;
    }
    if (tcb->m_lastAckedSeq >= m_roundEnd)
    {
        EndOfRound(tcb);
        m_roundEnd = tcb->m_nextTxSequence;
        m_roundMinRtt = Time::Max();
    }
}

void
TcpYeahPaper::EndOfRound(Ptr<TcpSocketState> tcb)
{
    if (m_roundMinRtt == Time::Max() || m_baseRtt == Time::Max())
    {
        return;
    }
    const uint32_t mss = tcb->m_segmentSize;
    const double cwnd = static_cast<double>(tcb->m_cWnd.Get()) / mss;
    if (!m_started)
    {
        m_started = true;
        m_renoCount = cwnd / 2; // "at the start-up count_reno is initialized to cwnd/2"
    }
    const double rttMin = m_roundMinRtt.GetSeconds();
    const double rttQueue = rttMin - m_baseRtt.GetSeconds();
    const double queue = rttQueue * cwnd / rttMin;
    const double level = rttQueue / m_baseRtt.GetSeconds();
    m_queue = queue;
    if (queue < m_qMax && level < 1.0 / m_phi)
    {
        m_fastMode = 1;
        m_slowRounds = 0;
        if (++m_fastRounds > m_zeta)
        {
            m_renoCount = cwnd / 2;
            m_fastRounds = 0;
        }
        return;
    }
    m_fastMode = 0;
    m_slowRounds = m_slowRounds.Get() + 1;
    if (queue > m_qMax && cwnd > m_renoCount)
    {
        // Precautionary decongestion: remove the estimated own backlog.
        const double reduced = std::max(cwnd - queue, m_renoCount.Get());
        const uint32_t segments = std::max(2U, static_cast<uint32_t>(reduced));
        tcb->m_cWnd = segments * mss;
        tcb->m_ssThresh = std::max(2U, segments / 2) * mss;
    }
    m_renoCount = m_renoCount.Get() + 1;
}

uint32_t
TcpYeahPaper::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    const uint32_t cwnd = tcb->GetCwndInSegments();
    uint32_t reduction;
    if (m_slowRounds >= m_rho)
    {
        reduction = cwnd / 2; // competing with Reno: halve
    }
    else
    {
        const auto queue = static_cast<uint32_t>(m_queue.Get());
        reduction = std::min(std::max(cwnd >> m_delta, queue), cwnd / 2);
    }
    m_renoCount = std::max(2.0, std::floor(m_renoCount.Get() / 2));
    return std::max(2U, cwnd - reduction) * tcb->m_segmentSize;
}

} // namespace ns3
