// Implementation of tcprepro::Simulation, part 2: the topology. AddNode (a node
// with the Internet stack), AddLink (a full-duplex point-to-point link with an
// independent rate, delay, device queue, root queue disc and random loss per
// direction, an IPv4 subnet, and the trace sinks of its traced directions) and
// AddGroup (a named group of flows counted as one series entity).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "simulation-impl.h"

#include "asymmetric-channel.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace tcprepro
{

int
Simulation::AddNode(const std::string& name)
{
    Ptr<Node> node = CreateObject<Node>();
    InternetStackHelper stack;
    stack.Install(node);
    m_impl->nodes.Add(node);
    m_impl->nodeNames.push_back(name);
    m_impl->nodeSocketAttributes.emplace_back();
    m_impl->sinks.emplace_back(nullptr);
    return static_cast<int>(m_impl->nodes.GetN()) - 1;
}

void
Simulation::SetNodeSocketAttributes(int node, const std::string& attributes)
{
    if (m_impl->built)
    {
        throw std::logic_error("SetNodeSocketAttributes() after Build()");
    }
    if (node < 0 || node >= static_cast<int>(m_impl->nodes.GetN()))
    {
        throw std::invalid_argument("SetNodeSocketAttributes: bad node index");
    }
    std::string error = CheckAttributes("ns3::TcpSocketBase", attributes);
    if (!error.empty())
    {
        throw std::invalid_argument("node " + m_impl->nodeNames[node] + ": " + error);
    }
    m_impl->nodeSocketAttributes[node] = attributes;
}

void
Simulation::AddLink(int nodeA, int nodeB, const DirectionSpec& aToB, const DirectionSpec& bToA)
{
    const int n = static_cast<int>(m_impl->nodes.GetN());
    if (nodeA < 0 || nodeA >= n || nodeB < 0 || nodeB >= n || nodeA == nodeB)
    {
        throw std::invalid_argument("AddLink: bad node indices");
    }
    for (const DirectionSpec* spec : {&aToB, &bToA})
    {
        if (!(spec->rate_bps > 0) || spec->delay_s < 0 || spec->device_queue_pkts == 0 ||
            spec->loss_rate < 0 || spec->loss_rate >= 1)
        {
            throw std::invalid_argument(
                "AddLink: rate must be > 0, delay >= 0, device queue >= 1, 0 <= loss rate < 1");
        }
    }
    // Validate the queue discs before creating anything.
    ObjectFactory qdiscAFactory = MakeFactory(aToB.qdisc_type, aToB.qdisc_attributes);
    ObjectFactory qdiscBFactory = MakeFactory(bToA.qdisc_type, bToA.qdisc_attributes);

    Ptr<Node> a = m_impl->nodes.Get(nodeA);
    Ptr<Node> b = m_impl->nodes.Get(nodeB);
    auto channel = CreateObject<AsymmetricPointToPointChannel>();
    channel->SetAttribute("DelayFromFirst", TimeValue(Seconds(aToB.delay_s)));
    channel->SetAttribute("DelayFromSecond", TimeValue(Seconds(bToA.delay_s)));

    NetDeviceContainer devices;
    std::vector<Ptr<Queue<Packet>>> deviceQueues;
    for (auto [node, spec] : {std::pair{a, &aToB}, std::pair{b, &bToA}})
    {
        auto device = CreateObject<PointToPointNetDevice>();
        device->SetAddress(Mac48Address::Allocate());
        device->SetDataRate(DataRate(static_cast<uint64_t>(std::llround(spec->rate_bps))));
        auto queue = CreateObject<DropTailQueue<Packet>>();
        queue->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, spec->device_queue_pkts));
        device->SetQueue(queue);
        // Flow control between the queue disc and the device queue (as
        // PointToPointHelper does): without it the qdisc would push packets
        // into a full device queue and lose them.
        auto queueInterface = CreateObject<NetDeviceQueueInterface>();
        queueInterface->GetTxQueue(0)->ConnectQueueTraces(queue);
        device->AggregateObject(queueInterface);
        node->AddDevice(device);
        device->Attach(channel);
        devices.Add(device);
        deviceQueues.push_back(queue);
    }
    std::vector<Ptr<QueueDisc>> qdiscs{qdiscAFactory.Create<QueueDisc>(),
                                       qdiscBFactory.Create<QueueDisc>()};
    for (int i = 0; i < 2; ++i)
    {
        Ptr<NetDevice> device = devices.Get(i);
        device->GetNode()->GetObject<TrafficControlLayer>()->SetRootQueueDiscOnDevice(device,
                                                                                      qdiscs[i]);
    }

    Ipv4AddressHelper addresses;
    uint32_t subnet = m_impl->subnetCounter++;
    std::ostringstream base;
    base << "10." << ((subnet >> 14) & 0xff) << "." << ((subnet >> 6) & 0xff) << "."
         << ((subnet & 0x3f) << 2);
    addresses.SetBase(Ipv4Address(base.str().c_str()), "255.255.255.252");
    Ipv4InterfaceContainer interfaces = addresses.Assign(devices);
    m_impl->nodeOfAddress[interfaces.GetAddress(0).Get()] = a->GetId();
    m_impl->nodeOfAddress[interfaces.GetAddress(1).Get()] = b->GetId();

    const DirectionSpec* specs[2] = {&aToB, &bToA};
    for (int i = 0; i < 2; ++i)
    {
        // Random loss of this direction: packets are destroyed on arrival at the
        // other end, after crossing the queue (as a lossy line would).
        Ptr<PointToPointNetDevice> receiver =
            DynamicCast<PointToPointNetDevice>(devices.Get(1 - i));
        if (specs[i]->loss_rate > 0)
        {
            auto errorModel = CreateObject<RateErrorModel>();
            errorModel->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
            errorModel->SetRate(specs[i]->loss_rate);
            receiver->SetReceiveErrorModel(errorModel);
        }
        if (specs[i]->trace_name.empty())
        {
            continue;
        }
        m_impl->links.push_back(LinkTrace{specs[i]->trace_name,
                                          specs[i]->rate_bps,
                                          specs[i]->delay_s,
                                          qdiscs[i],
                                          deviceQueues[i]});
        size_t index = m_impl->links.size() - 1;
        Impl* impl = m_impl.get();
        devices.Get(i)->TraceConnectWithoutContext("PhyTxEnd",
                                                   MakeBoundCallback(&CountTxBytes, impl, index));
        qdiscs[i]->TraceConnectWithoutContext("PacketsInQueue",
                                              MakeBoundCallback(&TrackMaxQueue, impl, index));
        receiver->TraceConnectWithoutContext("PhyRxDrop",
                                             MakeBoundCallback(&CountRandomDrop, impl, index));
        qdiscs[i]->TraceConnectWithoutContext("Drop",
                                              MakeCallback(&Impl::OnQdiscDrop, impl));
    }
}

int
Simulation::AddGroup(const std::string& name)
{
    if (m_impl->built)
    {
        throw std::logic_error("AddGroup() after Build()");
    }
    m_impl->groupNames.push_back(name);
    m_impl->groups.emplace_back();
    return static_cast<int>(m_impl->groups.size()) - 1;
}

} // namespace tcprepro
