// A point-to-point channel with a different propagation delay in each
// direction, as a Dummynet pipe pair or an ADSL line has (study A: 42 ms down,
// 52 ms up). ns-3's PointToPointChannel has one Delay for both directions.
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include "ns3/nstime.h"
#include "ns3/point-to-point-channel.h"

namespace ns3
{

class AsymmetricPointToPointChannel : public PointToPointChannel
{
  public:
    static TypeId GetTypeId();
    AsymmetricPointToPointChannel() = default;

    /// Delay of packets sent by the device attached first (index 0) / second (index 1).
    bool TransmitStart(Ptr<const Packet> p, Ptr<PointToPointNetDevice> src, Time txTime) override;

  private:
    Time m_delayFromFirst{Seconds(0)};
    Time m_delayFromSecond{Seconds(0)};
};

} // namespace ns3
