// Implementation of tcprepro::Simulation, part 4: what is recorded. Attributing
// packets to flows (Impl::FlowOfEndpoint, Impl::Classify), the trace sinks
// (queue-disc drops, transmitted bytes, random losses, largest queue), the
// periodic sampler that appends one row per sample interval to the result
// arrays, and the getters that hand those arrays to the caller after the run.
//
// SPDX-License-Identifier: GPL-2.0-only

#include "simulation-impl.h"

#include "pfq-lqd-queue-disc.h"

#include <algorithm>
#include <stdexcept>

namespace tcprepro
{

// ----------------------------------------------------------------------------
// Impl

int
Simulation::Impl::FlowOfEndpoint(Ipv4Address address, uint16_t port) const
{
    auto node = nodeOfAddress.find(address.Get());
    if (node == nodeOfAddress.end())
    {
        return -1;
    }
    auto flow = flowByEndpoint.find({node->second, port});
    return flow == flowByEndpoint.end() ? -1 : flow->second;
}

std::pair<int, bool>
Simulation::Impl::Classify(const Ipv4Header& ip, Ptr<const Packet> segment) const
{
    if (ip.GetProtocol() == UdpL4Protocol::PROT_NUMBER)
    {
        UdpHeader udp;
        segment->PeekHeader(udp);
        return {FlowOfEndpoint(ip.GetSource(), udp.GetSourcePort()), true};
    }
    if (ip.GetProtocol() != TcpL4Protocol::PROT_NUMBER)
    {
        return {-1, false};
    }
    TcpHeader tcp;
    Ptr<Packet> copy = segment->Copy();
    copy->RemoveHeader(tcp);
    if (copy->GetSize() > 0)
    {
        return {FlowOfEndpoint(ip.GetSource(), tcp.GetSourcePort()), true};
    }
    return {FlowOfEndpoint(ip.GetDestination(), tcp.GetDestinationPort()), false};
}

void
Simulation::Impl::OnQdiscDrop(Ptr<const QueueDiscItem> item)
{
    Ptr<const Ipv4QueueDiscItem> ipItem = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (!ipItem)
    {
        return;
    }
    auto [flowId, data] = Classify(ipItem->GetHeader(), item->GetPacket());
    if (flowId >= 0)
    {
        flows[flowId].Add(data ? &Counters::lostDataPkts : &Counters::lostAckPkts);
    }
}

void
Simulation::Impl::Sample()
{
    sampleTimes.push_back(Simulator::Now().GetSeconds());
    auto record = [this](const Counters& c, double cwnd) {
        flowSeries["rx_bytes"].push_back(c.rxBytes);
        flowSeries["cwnd_bytes"].push_back(cwnd);
        flowSeries["rtt_sum_s"].push_back(c.rttSumS);
        flowSeries["rtt_count"].push_back(c.rttCount);
        flowSeries["tx_data_pkts"].push_back(c.txDataPkts);
        flowSeries["retx_pkts"].push_back(c.retxPkts);
        flowSeries["lost_data_pkts"].push_back(c.lostDataPkts);
        flowSeries["lost_ack_pkts"].push_back(c.lostAckPkts);
        flowSeries["random_lost_pkts"].push_back(c.randomLostPkts);
        flowSeries["unacked_byte_s"].push_back(c.unackedByteS);
        flowSeries["rto_count"].push_back(c.rtoCount);
    };
    const double nowS = Simulator::Now().GetSeconds();
    for (FlowState& flow : flows) // bring every integral (and its group's) up to now
    {
        flow.AccumulateUnacked(nowS);
    }
    for (const FlowState& flow : flows)
    {
        if (flow.spec.group < 0)
        {
            record(flow.counters, flow.cwndBytes);
            for (std::size_t i = 0; i < ccSources.size(); ++i)
            {
                flowSeries["cc:" + ccSources[i]].push_back(flow.ccState.empty() ? kNaN
                                                                                : flow.ccState[i]);
            }
        }
    }
    for (const Counters& group : groups)
    {
        record(group, kNaN);
        for (const auto& source : ccSources)
        {
            flowSeries["cc:" + source].push_back(kNaN);
        }
    }
    SampleFlowBacklogs();
    for (LinkTrace& link : links)
    {
        const auto& stats = link.qdisc->GetStats();
        double drops = stats.nTotalDroppedPackets + link.deviceQueue->GetTotalDroppedPackets();
        linkSeries["queue_pkts"].push_back(link.qdisc->GetNPackets() +
                                           link.deviceQueue->GetNPackets());
        linkSeries["queue_bytes"].push_back(link.qdisc->GetNBytes() +
                                            link.deviceQueue->GetNBytes());
        linkSeries["drops_pkts"].push_back(drops);
        linkSeries["tx_bytes"].push_back(static_cast<double>(link.txBytes));
        linkSeries["random_drops_pkts"].push_back(static_cast<double>(link.randomDrops));
    }
    Simulator::Schedule(Seconds(sampleIntervalS), &Simulation::Impl::Sample, this);
}

void
Simulation::Impl::SampleFlowBacklogs()
{
    std::vector<double> backlog(flowEntity.empty() ? 0 : groups.size() + numUngrouped, 0.0);
    bool anyPfq = false;
    for (const LinkTrace& link : links)
    {
        Ptr<PfqLqdQueueDisc> pfq = DynamicCast<PfqLqdQueueDisc>(link.qdisc);
        if (!pfq)
        {
            continue;
        }
        anyPfq = true;
        pfq->ForEachFlow([this, &backlog](Ptr<const QueueDiscItem> item, uint32_t packets) {
            Ptr<const Ipv4QueueDiscItem> ipItem = DynamicCast<const Ipv4QueueDiscItem>(item);
            if (!ipItem)
            {
                return;
            }
            auto [flowId, data] = Classify(ipItem->GetHeader(), item->GetPacket());
            if (flowId >= 0 && data)
            {
                backlog[flowEntity[flowId]] += packets;
            }
        });
    }
    if (anyPfq)
    {
        auto& series = flowSeries["backlog_pkts"];
        series.insert(series.end(), backlog.begin(), backlog.end());
    }
}

// ----------------------------------------------------------------------------
// Trace sinks of the traced link directions (connected by AddLink)

void
CountTxBytes(Simulation::Impl* sim, size_t link, Ptr<const Packet> packet)
{
    sim->links[link].txBytes += packet->GetSize();
}

/// A packet the random-loss model destroyed at the receiving device (PPP header still on).
void
CountRandomDrop(Simulation::Impl* sim, size_t link, Ptr<const Packet> packet)
{
    sim->links[link].randomDrops++;
    Ptr<Packet> copy = packet->Copy();
    PppHeader ppp;
    copy->RemoveHeader(ppp);
    if (ppp.GetProtocol() != 0x0021) // IPv4
    {
        return;
    }
    Ipv4Header ip;
    copy->RemoveHeader(ip);
    auto [flowId, data] = sim->Classify(ip, copy);
    if (flowId >= 0 && data)
    {
        sim->flows[flowId].Add(&Counters::randomLostPkts);
    }
}

void
TrackMaxQueue(Simulation::Impl* sim, size_t link, uint32_t /*oldValue*/, uint32_t newValue)
{
    LinkTrace& trace = sim->links[link];
    trace.maxPkts = std::max(trace.maxPkts, newValue + trace.deviceQueue->GetNPackets());
}

// ----------------------------------------------------------------------------
// Results

std::vector<double>
Simulation::SampleTimes() const
{
    return m_impl->sampleTimes;
}

std::vector<std::string>
Simulation::FlowNames() const
{
    std::vector<std::string> names;
    for (const auto& flow : m_impl->flows)
    {
        names.push_back(flow.spec.name);
    }
    return names;
}

std::vector<std::string>
Simulation::SeriesNames() const
{
    std::vector<std::string> names;
    for (const auto& flow : m_impl->flows)
    {
        if (flow.spec.group < 0)
        {
            names.push_back(flow.spec.name);
        }
    }
    names.insert(names.end(), m_impl->groupNames.begin(), m_impl->groupNames.end());
    return names;
}

std::vector<std::string>
Simulation::LinkNames() const
{
    std::vector<std::string> names;
    for (const auto& link : m_impl->links)
    {
        names.push_back(link.name);
    }
    return names;
}

std::vector<double>
Simulation::FlowSeries(const std::string& var) const
{
    auto it = m_impl->flowSeries.find(var);
    if (it == m_impl->flowSeries.end())
    {
        if (m_impl->sampleTimes.empty() || (m_impl->flows.empty() && m_impl->groups.empty()))
        {
            return {};
        }
        throw std::invalid_argument("unknown flow series '" + var + "'");
    }
    return it->second;
}

std::vector<double>
Simulation::LinkSeries(const std::string& var) const
{
    auto it = m_impl->linkSeries.find(var);
    if (it == m_impl->linkSeries.end())
    {
        if (m_impl->sampleTimes.empty() || m_impl->links.empty())
        {
            return {};
        }
        throw std::invalid_argument("unknown link series '" + var + "'");
    }
    return it->second;
}

std::vector<double>
Simulation::FlowScalars(const std::string& var) const
{
    std::vector<double> out;
    for (const auto& flow : m_impl->flows)
    {
        if (var == "start_s")
        {
            out.push_back(flow.spec.start_s);
        }
        else if (var == "connected_s")
        {
            out.push_back(flow.connectedS);
        }
        else if (var == "end_s")
        {
            out.push_back(flow.endS);
        }
        else if (var == "bytes")
        {
            out.push_back(static_cast<double>(flow.spec.bytes));
        }
        else if (var == "rx_bytes")
        {
            out.push_back(flow.counters.rxBytes);
        }
        // study B (per-transfer loss picture): the flow's own data segments sent and
        // lost at traced queues over the whole run
        else if (var == "tx_data_pkts")
        {
            out.push_back(flow.counters.txDataPkts);
        }
        else if (var == "lost_data_pkts")
        {
            out.push_back(flow.counters.lostDataPkts);
        }
        else if (var == "initial_ssthresh_bytes")
        {
            out.push_back(flow.initialSsthreshBytes);
        }
        else
        {
            throw std::invalid_argument("unknown flow scalar '" + var + "'");
        }
    }
    return out;
}

std::vector<std::string>
Simulation::FlowCongestionTypes() const
{
    std::vector<std::string> names;
    for (const auto& flow : m_impl->flows)
    {
        names.push_back(flow.ccTypeInUse);
    }
    return names;
}

std::vector<double>
Simulation::LinkScalars(const std::string& var) const
{
    std::vector<double> out;
    for (const auto& link : m_impl->links)
    {
        if (var == "queue_max_pkts")
        {
            out.push_back(link.maxPkts);
        }
        else if (var == "rate_bps")
        {
            out.push_back(link.rateBps);
        }
        else if (var == "delay_s")
        {
            out.push_back(link.delayS);
        }
        else
        {
            throw std::invalid_argument("unknown link scalar '" + var + "'");
        }
    }
    return out;
}

uint64_t
Simulation::EventCount() const
{
    return Simulator::GetEventCount();
}

} // namespace tcprepro
