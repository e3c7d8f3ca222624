// Compound TCP (see tcp-compound.h for the sources and the parameter values).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "tcp-compound.h"

#include "ns3/double.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TcpCompound);

namespace
{

double
Above(double x)
{
    return std::nextafter(x, std::numeric_limits<double>::infinity());
}

} // namespace

TypeId
TcpCompound::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TcpCompound")
            .SetParent<TcpNewReno>()
            .SetGroupName("Tcprepro")
            .AddConstructor<TcpCompound>()
            .AddAttribute("Alpha",
                          "dwnd increase factor: dwnd += (Alpha*win^K - 1)+ per round; > 0 "
                          "(draft: 1/8)",
                          DoubleValue(0.125),
                          MakeDoubleAccessor(&TcpCompound::m_alpha),
                          MakeDoubleChecker<double>(Above(0.0)))
            .AddAttribute("Beta",
                          "multiplicative decrease of the whole window on loss, in (0, 1) "
                          "(draft: 1/2)",
                          DoubleValue(0.5),
                          MakeDoubleAccessor(&TcpCompound::m_beta),
                          MakeDoubleChecker<double>(Above(0.0), std::nextafter(1.0, 0.0)))
            .AddAttribute("K",
                          "exponent of the dwnd increase, in (0, 1] (draft: 0.75)",
                          DoubleValue(0.75),
                          MakeDoubleAccessor(&TcpCompound::m_k),
                          MakeDoubleChecker<double>(Above(0.0), 1.0))
            .AddAttribute("Gamma",
                          "backlog threshold (packets) above which dwnd shrinks; > 0 "
                          "(paper/draft: 30)",
                          DoubleValue(30.0),
                          MakeDoubleAccessor(&TcpCompound::m_gamma),
                          MakeDoubleChecker<double>(Above(0.0)))
            .AddAttribute("Eta",
                          "dwnd decrease per packet of backlog beyond Gamma; > 0 (draft: 1)",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&TcpCompound::m_eta),
                          MakeDoubleChecker<double>(Above(0.0)))
            .AddAttribute("LowWindow",
                          "window (packets) at or below which CTCP is standard TCP; >= 0 "
                          "(draft: 38)",
                          DoubleValue(38.0),
                          MakeDoubleAccessor(&TcpCompound::m_lowWindow),
                          MakeDoubleChecker<double>(0.0))
            .AddTraceSource("DelayWindow",
                            "delay window dwnd (segments)",
                            MakeTraceSourceAccessor(&TcpCompound::m_dwndTrace),
                            "ns3::TracedValueCallback::Double")
            .AddTraceSource("Backlog",
                            "backlog estimate diff of the last round (segments)",
                            MakeTraceSourceAccessor(&TcpCompound::m_backlogTrace),
                            "ns3::TracedValueCallback::Double");
    return tid;
}

TcpCompound::TcpCompound(const TcpCompound& other)
    : TcpNewReno(other),
      m_alpha(other.m_alpha),
      m_beta(other.m_beta),
      m_k(other.m_k),
      m_gamma(other.m_gamma),
      m_eta(other.m_eta),
      m_lowWindow(other.m_lowWindow),
      m_dwndBytes(other.m_dwndBytes),
      m_baseRtt(other.m_baseRtt),
      m_roundEnd(other.m_roundEnd),
      m_roundOpen(other.m_roundOpen),
      m_dwndTrace(other.m_dwndTrace),
      m_backlogTrace(other.m_backlogTrace)
{
}

std::string
TcpCompound::GetName() const
{
    return "TcpCompound";
}

Ptr<TcpCongestionOps>
TcpCompound::Fork()
{
    return CopyObject<TcpCompound>(this);
}

void
TcpCompound::Init(Ptr<TcpSocketState> tcb)
{
    SetDelayWindow(m_dwndBytes, tcb->m_segmentSize);
}

void
TcpCompound::SetDelayWindow(uint32_t bytes, uint32_t segmentSize)
{
    m_dwndBytes = bytes;
    m_dwndTrace = static_cast<double>(bytes) / segmentSize;
}

void
TcpCompound::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt)
{
    // No RTT sampling during loss recovery (draft section 6).
    Time sample = tcb->m_lastRtt.Get();
    if (tcb->m_congState == TcpSocketState::CA_OPEN && sample.IsStrictlyPositive())
    {
        m_baseRtt = std::min(m_baseRtt, sample);
    }
}

void
TcpCompound::CongestionStateSet(Ptr<TcpSocketState> tcb,
                                const TcpSocketState::TcpCongState_t newState)
{
    if (newState == TcpSocketState::CA_LOSS)
    {
        // Retransmission timeout: back to slow start without the delay component,
        // and baseRTT must be measured again (draft section 3).
        SetDelayWindow(0, tcb->m_segmentSize);
        m_baseRtt = Time::Max();
    }
    if (newState != TcpSocketState::CA_OPEN)
    {
        m_roundOpen = false;
    }
}

void
TcpCompound::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    if (tcb->m_cWnd < tcb->m_ssThresh)
    {
        // Standard slow start; dwnd is zero there (draft section 3).
        segmentsAcked = TcpNewReno::SlowStart(tcb, segmentsAcked);
    }
    if (tcb->m_cWnd < tcb->m_ssThresh || segmentsAcked == 0)
    {
        return;
    }
    const uint32_t mss = tcb->m_segmentSize;
    const uint32_t window = tcb->m_cWnd;
    if (m_dwndBytes + mss > window)
    {
        SetDelayWindow(window > mss ? window - mss : 0, mss);
    }
    // Loss-based component: cwnd += 1/win per ACK (eq. 2), byte arithmetic as TcpNewReno.
    uint32_t lossBytes = window - m_dwndBytes;
    double adder = static_cast<double>(mss * mss) / window;
    lossBytes += static_cast<uint32_t>(std::max(1.0, adder));

    if (!m_roundOpen)
    {
        m_roundOpen = true;
        m_roundEnd = tcb->m_nextTxSequence;
    }
    else if (tcb->m_lastAckedSeq >= m_roundEnd)
    {
        tcb->m_cWnd = lossBytes + m_dwndBytes;
        UpdateDelayWindow(tcb);
        m_roundEnd = tcb->m_nextTxSequence;
    }
    tcb->m_cWnd = lossBytes + m_dwndBytes;
}

void
TcpCompound::UpdateDelayWindow(Ptr<TcpSocketState> tcb)
{
    const uint32_t mss = tcb->m_segmentSize;
    const double window = static_cast<double>(tcb->m_cWnd.Get()) / mss;
    if (window <= m_lowWindow)
    {
        SetDelayWindow(0, mss); // standard TCP region
        return;
    }
    const Time srtt = tcb->m_srtt.Get();
    if (m_baseRtt == Time::Max() || !srtt.IsStrictlyPositive())
    {
        return;
    }
    // diff = (expected - actual) * baseRTT = win * (1 - baseRTT / sRTT)
    const double diff = window * (1.0 - m_baseRtt.GetSeconds() / srtt.GetSeconds());
    m_backlogTrace = diff;
    double dwnd = static_cast<double>(m_dwndBytes) / mss;
    if (diff < m_gamma)
    {
        dwnd += std::max(0.0, m_alpha * std::pow(window, m_k) - 1.0);
    }
    else
    {
        dwnd = std::max(0.0, dwnd - m_eta * diff);
    }
    SetDelayWindow(static_cast<uint32_t>(std::lround(dwnd * mss)), mss);
}

uint32_t
TcpCompound::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    const uint32_t mss = tcb->m_segmentSize;
    // Loss: cwnd is halved, dwnd = (win * (1 - beta) - cwnd/2)+ (paper, draft eq. 5).
    const uint32_t lossPart = bytesInFlight > m_dwndBytes ? bytesInFlight - m_dwndBytes : 0;
    const uint32_t lossHalved = lossPart / 2;
    const double delay = std::floor(bytesInFlight * (1.0 - m_beta) - lossHalved);
    SetDelayWindow(delay > 0 ? static_cast<uint32_t>(delay) : 0, mss);
    return std::max(2 * mss, lossHalved + m_dwndBytes);
}

} // namespace ns3
