// SPDX-License-Identifier: GPL-2.0-only

#include "asymmetric-channel.h"

#include "ns3/node.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(AsymmetricPointToPointChannel);

TypeId
AsymmetricPointToPointChannel::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::AsymmetricPointToPointChannel")
            .SetParent<PointToPointChannel>()
            .SetGroupName("Tcprepro")
            .AddConstructor<AsymmetricPointToPointChannel>()
            .AddAttribute("DelayFromFirst",
                          "Propagation delay of packets sent by the first attached device",
                          TimeValue(Seconds(0)),
                          MakeTimeAccessor(&AsymmetricPointToPointChannel::m_delayFromFirst),
                          MakeTimeChecker(Seconds(0)))
            .AddAttribute("DelayFromSecond",
                          "Propagation delay of packets sent by the second attached device",
                          TimeValue(Seconds(0)),
                          MakeTimeAccessor(&AsymmetricPointToPointChannel::m_delayFromSecond),
                          MakeTimeChecker(Seconds(0)));
    return tid;
}

bool
AsymmetricPointToPointChannel::TransmitStart(Ptr<const Packet> p,
                                             Ptr<PointToPointNetDevice> src,
                                             Time txTime)
{
    const bool fromFirst = (src == GetPointToPointDevice(0));
    Ptr<PointToPointNetDevice> dst = GetPointToPointDevice(fromFirst ? 1 : 0);
    const Time delay = fromFirst ? m_delayFromFirst : m_delayFromSecond;
    Simulator::ScheduleWithContext(dst->GetNode()->GetId(),
                                   txTime + delay,
                                   &PointToPointNetDevice::Receive,
                                   dst,
                                   p->Copy());
    return true;
}

} // namespace ns3
