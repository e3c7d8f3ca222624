// Generalised AIMD(alpha, beta) and MIMD(alpha, beta) congestion controls with
// the parameterisation of study B (Auge, thesis chapter 5, figures 5.16-5.19):
//
//   AIMD: congestion avoidance  cwnd += alpha / cwnd  per ACKed segment (segments)
//         on loss               cwnd -= cwnd / beta                 Reno = AIMD(1, 2)
//   MIMD: congestion avoidance  cwnd += 1 / alpha     per ACKed segment once cwnd >= alpha
//         on loss               cwnd -= cwnd * 2^-beta              Scalable = MIMD(50, 3)
//
// Both count acknowledged segments in congestion avoidance, so the two families grow
// under one rule whatever the receiver's ACK policy, and both keep ns-3's standard slow
// start (TcpNewReno). A testbed that grew per ACK instead is set by its stack profile
// (tcp.ack_counting, the TcpAckCounting decorator). The byte arithmetic is that of
// ns-3's own models so that the special cases are exact: AIMD(1, 2) gives the cwnd
// trace of ns3::TcpNewReno when both count segments (one segment per ACK, or
// ack_counting 'segment') and MIMD(50, 3) that of ns3::TcpScalable
// (tests/test_models_aimd_mimd.py compares them).
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include "ns3/tcp-congestion-ops.h"

namespace ns3
{

/// AIMD(alpha, beta): additive increase of alpha segments per RTT, cwnd -= cwnd/beta on loss.
///
/// Increase: every ACK received in congestion avoidance adds
/// max(1, alpha * segmentsAcked * MSS^2 / cwnd) bytes (integer bytes, as ns3::TcpNewReno,
/// which adds max(1, MSS^2 / cwnd) per ACK whatever it acknowledges).
/// Decrease: ssthresh = max(2 MSS, FlightSize * (1 - 1/beta)) (RFC 5681 uses
/// FlightSize, as ns3::TcpNewReno does).
class TcpGeneralizedAimd : public TcpNewReno
{
  public:
    static TypeId GetTypeId();
    TcpGeneralizedAimd() = default;
    TcpGeneralizedAimd(const TcpGeneralizedAimd& other) = default;

    std::string GetName() const override;
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
    Ptr<TcpCongestionOps> Fork() override;

  protected:
    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;

  private:
    double m_alpha{1.0}; //!< segments added per RTT
    double m_beta{2.0};  //!< the window loses 1/beta of itself on a loss
};

/// MIMD(alpha, beta): cwnd grows by 1/alpha per ACKed segment, loses cwnd * 2^-beta on loss.
///
/// Increase (Scalable TCP's counting rule, as in ns3::TcpScalable and Linux
/// tcp_scalable): ACKed segments are counted and the window grows by one
/// segment every w = min(cwnd, alpha) of them, so the increase is 1/alpha per
/// ACKed segment once cwnd >= alpha and Reno's 1/cwnd below.
/// Decrease: ssthresh = max(2, floor(FlightSize / MSS) * (1 - 2^-beta)) segments.
class TcpGeneralizedMimd : public TcpNewReno
{
  public:
    static TypeId GetTypeId();
    TcpGeneralizedMimd() = default;
    TcpGeneralizedMimd(const TcpGeneralizedMimd& other) = default;

    std::string GetName() const override;
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
    Ptr<TcpCongestionOps> Fork() override;

  protected:
    void CongestionAvoidance(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;

  private:
    double m_alpha{50.0};  //!< ACKed segments per one-segment increase (large windows)
    double m_beta{3.0};    //!< decrease factor exponent: the window loses 2^-beta of itself
    uint32_t m_ackCount{0}; //!< ACKed segments not yet turned into window
};

} // namespace ns3
