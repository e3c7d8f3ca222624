// TCP Hybla with rho from the minimum smoothed RTT (see tcp-hybla.h).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "tcp-hybla.h"

#include "ns3/tcp-socket-state.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TcpHyblaMinRtt);

TypeId
TcpHyblaMinRtt::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TcpHyblaMinRtt")
            .SetParent<TcpNewReno>()
            .SetGroupName("Tcprepro")
            .AddConstructor<TcpHyblaMinRtt>()
            .AddAttribute("RRTT",
                          "reference RTT (RTT0): a flow of this RTT grows as Reno; > 0",
                          TimeValue(MilliSeconds(25)),
                          MakeTimeAccessor(&TcpHyblaMinRtt::m_rtt0),
                          MakeTimeChecker(NanoSeconds(1)))
            .AddTraceSource("Rho",
                            "scaling factor rho = max(minimum smoothed RTT / RRTT, 1)",
                            MakeTraceSourceAccessor(&TcpHyblaMinRtt::m_rho),
                            "ns3::TracedValueCallback::Double");
    return tid;
}

TcpHyblaMinRtt::TcpHyblaMinRtt(const TcpHyblaMinRtt& other)
    : TcpNewReno(other),
      m_rtt0(other.m_rtt0),
      m_minRtt(other.m_minRtt),
      m_rho(other.m_rho),
      m_fraction(other.m_fraction)
{
}

std::string
TcpHyblaMinRtt::GetName() const
{
    return "TcpHyblaMinRtt";
}

Ptr<TcpCongestionOps>
TcpHyblaMinRtt::Fork()
{
    return CopyObject<TcpHyblaMinRtt>(this);
}

void
TcpHyblaMinRtt::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt)
{
    const Time smoothed = tcb->m_srtt.Get();
    if (smoothed.IsStrictlyPositive() && smoothed < m_minRtt)
    {
        m_minRtt = smoothed;
        m_rho = std::max(m_minRtt.GetSeconds() / m_rtt0.GetSeconds(), 1.0);
    }
}

void
TcpHyblaMinRtt::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    if (segmentsAcked == 0)
    {
        return;
    }
    const uint32_t mss = tcb->m_segmentSize;
    const bool slowStart = tcb->m_cWnd < tcb->m_ssThresh;
    const double rho = m_rho;
    const double window = static_cast<double>(tcb->m_cWnd.Get()) / mss;
    m_fraction += slowStart ? std::pow(2.0, rho) - 1.0 : rho * rho / window;
    const double whole = std::floor(m_fraction);
    m_fraction -= whole;
    uint64_t next = tcb->m_cWnd.Get() + static_cast<uint64_t>(whole) * mss;
    if (slowStart)
    {
        next = std::min<uint64_t>(next, tcb->m_ssThresh.Get());
    }
    tcb->m_cWnd = static_cast<uint32_t>(std::min<uint64_t>(next, UINT32_MAX));
}

} // namespace ns3
