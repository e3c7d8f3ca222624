// What a congestion control's window growth counts: ACKs or acknowledged segments.
//
// The testbeds of the reproduced studies did not grow their windows by the same rule,
// and ns-3's models do not agree either: TcpNewReno adds MSS^2/cwnd per ACK whatever it
// acknowledges (so with an ACK every second segment it grows half a segment per RTT),
// while TcpCubic counts acknowledged segments. A stack profile says which rule its
// testbed had (docs/testbeds.md):
//  - per acknowledged segment ("byte counting", RFC 3465, M. Allman, "TCP Congestion
//    Control with Appropriate Byte Counting (ABC)", 2003): FreeBSD 9.2 with
//    net.inet.tcp.rfc3465 = 1. In slow start one ACK adds at most L segments
//    (RFC 3465 section 2.2; FreeBSD's net.inet.tcp.abc_l_var); in congestion avoidance
//    every acknowledged segment counts;
//  - per ACK: Linux 2.6 with tcp_abc = 0 (and before tcp_abc existed): one growth step
//    per ACK that acknowledges new data, however many segments it covers.
//
// Each phase (slow start, congestion avoidance) has its own rule, since some stacks
// mixed them: Linux 2.6.16 with tcp_abc = 1 grows Reno per acknowledged byte in
// congestion avoidance but per ACK in slow start.
//
// Implementation: a decorator (tcp-congestion-decorator.h). Per segment, it calls the
// inner model's IncreaseWindow once for each acknowledged segment (at most L in slow
// start), with one segment each: a model that grows per call (TcpNewReno's MSS^2/cwnd)
// then grows per segment, and one that counts segments (TcpCubic) grows as before.
// Per ACK, it calls it once with one segment: a model that counts segments then grows
// per ACK. Every other call is forwarded unchanged, so per-RTT models (Vegas, FAST,
// Compound's delay window) keep their own rules.
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include "tcp-congestion-decorator.h"

namespace ns3
{

class TcpAckCounting : public TcpCongestionDecorator
{
  public:
    /// What one growth step of the inner model stands for, in one phase.
    enum Counting
    {
        MODEL,       //!< the inner model's own rule (calls forwarded unchanged)
        PER_ACK,     //!< one step per ACK of new data
        PER_SEGMENT, //!< one step per acknowledged full segment
    };

    static TypeId GetTypeId();
    TcpAckCounting() = default;
    TcpAckCounting(const TcpAckCounting& other) = default;

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
    Ptr<TcpCongestionOps> Fork() override;

  private:
    Counting m_slowStart{PER_SEGMENT};           // below ssthresh
    Counting m_congestionAvoidance{PER_SEGMENT}; // at or above ssthresh
    uint32_t m_slowStartLimit{0}; // segments one ACK may add in slow start; 0: no limit
};

} // namespace ns3
