// A TcpSocketBase whose retransmission timer keeps its back-off until an RTT sample.
//
// RFC 6298 (V. Paxson et al., "Computing TCP's Retransmission Timer", 2011), rule 5.5:
// when the timer expires, the sender doubles RTO; section 5's note: the RTO computed from
// srtt and rttvar replaces the backed-off value only "once a new RTT measurement is
// obtained". This is the timer half of Karn's algorithm (P. Karn, C. Partridge,
// SIGCOMM 1987), and every stack of the reproduced studies does it:
//  - FreeBSD 9.2 sets the timer from TCP_REXMTVAL scaled by tcp_backoff[t_rxtshift] and
//    clears t_rxtshift only in tcp_xmit_timer, i.e. with an RTT sample
//    (sys/netinet/tcp_input.c, tcp_output.c);
//  - Linux 2.6 doubles icsk_rto in tcp_retransmit_timer and computes it again (tcp_set_rto,
//    icsk_backoff = 0) only in tcp_ack_update_rtt, i.e. with an RTT sample
//    (net/ipv4/tcp_input.c, tcp_timer.c);
//  - Windows 7 is closed source; it follows RFC 6298 as far as it is documented.
//
// ns-3's TcpSocketBase (3.44) does not: NewAck() sets m_rto from srtt and rttvar on every
// ACK of new data, and ReTxTimeout() empties the RTT history, so the ACK that follows a
// timeout gives no sample but collapses the timer. When the path's RTT grows past the RTO
// (a queue filling behind the ACKs), a flow with one segment in flight then times out on
// every segment with the same stale srtt, for as long as the queue stays (study A: a
// Compound upload at a 1-segment window for 600 s against a CUBIC download).
//
// This socket keeps m_rto as ReTxTimeout() left it, across ACKs of new data, until
// EstimateRtt() takes a sample; then ns-3's rule applies again. Nothing else changes.
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include "ns3/tcp-socket-base.h"

namespace ns3
{

class TcpL4Protocol;

class TcpSocketKarn : public TcpSocketBase
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    TcpSocketKarn() = default;
    TcpSocketKarn(const TcpSocketKarn& other) = default;

    /// A socket of this class on the node of ``tcp``, set up as TcpL4Protocol::CreateSocket
    /// sets up its own (the protocol's RTT estimator, congestion control and recovery types).
    static Ptr<TcpSocketKarn> Create(Ptr<TcpL4Protocol> tcp);

  protected:
    Ptr<TcpSocketBase> Fork() override;
    void ReTxTimeout() override;
    void EstimateRtt(const TcpHeader& tcpHeader) override;
    void NewAck(const SequenceNumber32& seq, bool resetRTO) override;

  private:
    bool m_backedOff{false}; //!< a timeout doubled m_rto and no RTT sample came since
};

} // namespace ns3
