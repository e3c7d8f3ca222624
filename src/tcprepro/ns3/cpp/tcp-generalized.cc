// Generalised AIMD / MIMD congestion controls (see tcp-generalized.h).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "tcp-generalized.h"

#include "ns3/double.h"
#include "ns3/tcp-socket-state.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ns3
{

namespace
{

/// Smallest double strictly greater than `x`: DoubleChecker bounds are inclusive.
double
Above(double x)
{
    return std::nextafter(x, std::numeric_limits<double>::infinity());
}

} // namespace

NS_OBJECT_ENSURE_REGISTERED(TcpGeneralizedAimd);
NS_OBJECT_ENSURE_REGISTERED(TcpGeneralizedMimd);

TypeId
TcpGeneralizedAimd::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TcpGeneralizedAimd")
            .SetParent<TcpNewReno>()
            .SetGroupName("Tcprepro")
            .AddConstructor<TcpGeneralizedAimd>()
            .AddAttribute("Alpha",
                          "Additive increase: segments added per RTT (cwnd += Alpha/cwnd per "
                          "ACKed segment); must be > 0. Reno: 1",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&TcpGeneralizedAimd::m_alpha),
                          MakeDoubleChecker<double>(Above(0.0)))
            .AddAttribute("Beta",
                          "Multiplicative decrease: on loss cwnd -= cwnd/Beta; must be > 1. "
                          "Reno: 2",
                          DoubleValue(2.0),
                          MakeDoubleAccessor(&TcpGeneralizedAimd::m_beta),
                          MakeDoubleChecker<double>(Above(1.0)));
    return tid;
}

std::string
TcpGeneralizedAimd::GetName() const
{
    return "TcpGeneralizedAimd";
}

void
TcpGeneralizedAimd::CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    if (segmentsAcked == 0)
    {
        return;
    }
    // per acknowledged segment, as TcpGeneralizedMimd counts: the two families grow under
    // one rule (an ACK that covers two segments adds twice Alpha/cwnd)
    const double mssSquared = static_cast<double>(tcb->m_segmentSize * tcb->m_segmentSize);
    double adder = m_alpha * segmentsAcked * mssSquared / tcb->m_cWnd.Get();
    tcb->m_cWnd += static_cast<uint32_t>(std::max(1.0, adder));
}

uint32_t
TcpGeneralizedAimd::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    auto kept = static_cast<uint32_t>(bytesInFlight * (1.0 - 1.0 / m_beta));
    return std::max(2 * tcb->m_segmentSize, kept);
}

Ptr<TcpCongestionOps>
TcpGeneralizedAimd::Fork()
{
    return CopyObject<TcpGeneralizedAimd>(this);
}

TypeId
TcpGeneralizedMimd::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TcpGeneralizedMimd")
            .SetParent<TcpNewReno>()
            .SetGroupName("Tcprepro")
            .AddConstructor<TcpGeneralizedMimd>()
            .AddAttribute("Alpha",
                          "Multiplicative increase: one segment per Alpha ACKed segments "
                          "(cwnd += 1/Alpha per ACKed segment once cwnd >= Alpha); must be > 0. "
                          "Scalable: 50",
                          DoubleValue(50.0),
                          MakeDoubleAccessor(&TcpGeneralizedMimd::m_alpha),
                          MakeDoubleChecker<double>(Above(0.0)))
            .AddAttribute("Beta",
                          "Multiplicative decrease: on loss cwnd -= cwnd * 2^-Beta; must be > 0. "
                          "Scalable: 3 (x 0.875)",
                          DoubleValue(3.0),
                          MakeDoubleAccessor(&TcpGeneralizedMimd::m_beta),
                          MakeDoubleChecker<double>(Above(0.0)));
    return tid;
}

std::string
TcpGeneralizedMimd::GetName() const
{
    return "TcpGeneralizedMimd";
}

void
TcpGeneralizedMimd::CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    const uint32_t cwndSegments = std::max(tcb->GetCwndInSegments(), 1U);
    uint32_t next = cwndSegments;
    const double perSegment = std::min(static_cast<double>(cwndSegments), m_alpha);
    // A count that already reached the (possibly lowered) threshold pays out first.
    if (m_ackCount >= perSegment)
    {
        m_ackCount = 0;
        ++next;
    }
    m_ackCount += segmentsAcked;
    if (m_ackCount >= perSegment)
    {
        next += static_cast<uint32_t>(std::floor(m_ackCount / perSegment));
        m_ackCount = 0;
    }
    if (next != cwndSegments)
    {
        tcb->m_cWnd = next * tcb->m_segmentSize;
    }
}

uint32_t
TcpGeneralizedMimd::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    const uint32_t flightSegments = bytesInFlight / tcb->m_segmentSize;
    const double kept = flightSegments * (1.0 - std::exp2(-m_beta));
    return static_cast<uint32_t>(std::max(2.0, kept)) * tcb->m_segmentSize;
}

Ptr<TcpCongestionOps>
TcpGeneralizedMimd::Fork()
{
    return CopyObject<TcpGeneralizedMimd>(this);
}

} // namespace ns3
