// A TcpSocketBase whose timer keeps its back-off until an RTT sample (see tcp-socket-karn.h).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "tcp-socket-karn.h"

#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/rtt-estimator.h"
#include "ns3/simulator.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/type-id.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TcpSocketKarn);

TypeId
TcpSocketKarn::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TcpSocketKarn")
                            .SetParent<TcpSocketBase>()
                            .SetGroupName("Tcprepro")
                            .AddConstructor<TcpSocketKarn>();
    return tid;
}

TypeId
TcpSocketKarn::GetInstanceTypeId() const
{
    return TcpSocketKarn::GetTypeId();
}

Ptr<TcpSocketKarn>
TcpSocketKarn::Create(Ptr<TcpL4Protocol> tcp)
{
    TypeIdValue rttType;
    TypeIdValue congestionType;
    TypeIdValue recoveryType;
    tcp->GetAttribute("RttEstimatorType", rttType);
    tcp->GetAttribute("SocketType", congestionType);
    tcp->GetAttribute("RecoveryType", recoveryType);
    ObjectFactory rtt(rttType.Get().GetName());
    ObjectFactory congestion(congestionType.Get().GetName());
    ObjectFactory recovery(recoveryType.Get().GetName());

    Ptr<TcpSocketKarn> socket = CreateObject<TcpSocketKarn>();
    socket->SetNode(tcp->GetObject<Node>());
    socket->SetTcp(tcp);
    socket->SetRtt(rtt.Create<RttEstimator>());
    socket->SetCongestionControlAlgorithm(congestion.Create<TcpCongestionOps>());
    socket->SetRecoveryAlgorithm(recovery.Create<TcpRecoveryOps>());
    tcp->AddSocket(socket);
    return socket;
}

Ptr<TcpSocketBase>
TcpSocketKarn::Fork()
{
    return CopyObject<TcpSocketKarn>(this);
}

void
TcpSocketKarn::ReTxTimeout()
{
    const Time before = m_rto.Get();
    TcpSocketBase::ReTxTimeout();
    if (m_rto.Get() > before)
    {
        m_backedOff = true; // the timer expired and was doubled (RFC 6298, rule 5.5)
    }
}

void
TcpSocketKarn::EstimateRtt(const TcpHeader& tcpHeader)
{
    const uint32_t samples = m_rtt->GetNSamples();
    TcpSocketBase::EstimateRtt(tcpHeader);
    if (m_rtt->GetNSamples() != samples)
    {
        m_backedOff = false; // a new measurement: the RTO follows srtt and rttvar again
    }
}

void
TcpSocketKarn::NewAck(const SequenceNumber32& seq, bool resetRTO)
{
    // TcpSocketBase::DoForwardUp calls EstimateRtt before the state machine that calls
    // NewAck, so m_backedOff already tells whether this ACK gave a sample
    if (!m_backedOff || !resetRTO || m_state == SYN_RCVD)
    {
        TcpSocketBase::NewAck(seq, resetRTO);
        return;
    }
    // restart the timer as TcpSocketBase::NewAck does, with the backed-off RTO, before
    // the rest of it (which stops the timer when nothing is left to send); m_rto is
    // never set to the collapsed value, so its trace sees no change
    m_retxEvent.Cancel();
    m_retxEvent = Simulator::Schedule(m_rto, &TcpSocketKarn::ReTxTimeout, this);
    TcpSocketBase::NewAck(seq, false);
}

} // namespace ns3
