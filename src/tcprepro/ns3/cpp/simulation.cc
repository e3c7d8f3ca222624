// Implementation of tcprepro::Simulation, part 1: attribute parsing and
// checking, the Simulation's life cycle (one at a time, seeded), flows, Build
// (routing, sinks, senders, the sampler) and the event loop.
//
// The other parts: topology.cc (nodes, links, groups), applications.cc (the
// flow senders and sinks), traces.cc (trace sinks, sampler, result getters);
// simulation-impl.h declares what they share.
//
// SPDX-License-Identifier: GPL-2.0-only

#include "simulation-impl.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace tcprepro
{

namespace
{

bool g_simulationActive = false;

} // namespace

std::vector<std::pair<std::string, std::string>>
ParseAttributes(const std::string& attributes)
{
    std::vector<std::pair<std::string, std::string>> out;
    std::stringstream ss(attributes);
    std::string item;
    while (std::getline(ss, item, '|'))
    {
        if (item.empty())
        {
            continue;
        }
        auto eq = item.find('=');
        if (eq == std::string::npos || eq == 0)
        {
            throw std::invalid_argument("malformed attribute '" + item + "' (expected Name=Value)");
        }
        out.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
    return out;
}

ObjectFactory
MakeFactory(const std::string& type, const std::string& attributes)
{
    std::string error = CheckAttributes(type, attributes);
    if (!error.empty())
    {
        throw std::invalid_argument(error);
    }
    ObjectFactory factory;
    factory.SetTypeId(type);
    for (const auto& [name, value] : ParseAttributes(attributes))
    {
        factory.Set(name, StringValue(value));
    }
    return factory;
}

std::string
CheckAttributes(const std::string& type, const std::string& attributes)
{
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe(type, &tid))
    {
        return "unknown ns-3 type '" + type + "'";
    }
    std::vector<std::pair<std::string, std::string>> parsed;
    try
    {
        parsed = ParseAttributes(attributes);
    }
    catch (const std::invalid_argument& e)
    {
        return e.what();
    }
    for (const auto& [name, value] : parsed)
    {
        TypeId::AttributeInformation info;
        if (!tid.LookupAttributeByName(name, &info))
        {
            return type + " has no attribute '" + name + "'";
        }
        if (!info.checker->CreateValidValue(StringValue(value)))
        {
            return type + "::" + name + ": invalid value '" + value + "' (" + info.help + ")";
        }
    }
    return "";
}

#ifndef TCPREPRO_NS3_VERSION
#error "the build must define TCPREPRO_NS3_VERSION (the ns-3 version of the wheel)"
#endif

std::string
Ns3Version()
{
    return TCPREPRO_NS3_VERSION;
}

// ----------------------------------------------------------------------------
// Simulation

Simulation::Simulation(uint32_t seed, uint32_t run)
    : m_impl(std::make_unique<Impl>())
{
    if (g_simulationActive)
    {
        throw std::logic_error("only one tcprepro::Simulation may exist at a time");
    }
    g_simulationActive = true;
    Config::Reset();
    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);
    // Random variables without an explicit stream (the error models' among them) take
    // the next automatic stream index, a process-wide counter that Simulator::Destroy
    // does not reset: without this, a run's losses depended on the runs before it in
    // the same worker process.
    RngSeedManager::ResetNextStreamIndex();
}

Simulation::~Simulation()
{
    m_impl->sinks.clear();
    m_impl->links.clear();
    Simulator::Destroy();
    g_simulationActive = false;
}

void
Simulation::SetDefault(const std::string& path, const std::string& value)
{
    if (!Config::SetDefaultFailSafe(path, StringValue(value)))
    {
        throw std::invalid_argument("cannot set ns-3 default " + path + " = " + value);
    }
}

void
Simulation::SampleCongestionState(const std::string& source)
{
    if (Simulator::Now().IsStrictlyPositive())
    {
        throw std::logic_error("SampleCongestionState must be called before RunUntil");
    }
    if (std::find(m_impl->ccSources.begin(), m_impl->ccSources.end(), source) ==
        m_impl->ccSources.end())
    {
        m_impl->ccSources.push_back(source);
    }
}

int
Simulation::AddFlow(const FlowSpec& spec)
{
    const int n = static_cast<int>(m_impl->nodes.GetN());
    if (m_impl->built)
    {
        throw std::logic_error("AddFlow() after Build()");
    }
    if (spec.src < 0 || spec.src >= n || spec.dst < 0 || spec.dst >= n || spec.src == spec.dst)
    {
        throw std::invalid_argument("AddFlow " + spec.name + ": bad node indices");
    }
    if (spec.start_s < 0)
    {
        throw std::invalid_argument("AddFlow " + spec.name + ": negative start time");
    }
    if (spec.group >= static_cast<int>(m_impl->groups.size()))
    {
        throw std::invalid_argument("AddFlow " + spec.name + ": unknown group");
    }
    if (spec.udp)
    {
        if (!(spec.rate_bps > 0) || spec.packet_bytes <= kUdpIpHeaderBytes ||
            !(spec.stop_s > spec.start_s))
        {
            throw std::invalid_argument("AddFlow " + spec.name +
                                        ": a UDP source needs rate > 0, packet_bytes > 28 and "
                                        "stop > start");
        }
        FlowState state;
        state.spec = spec;
        m_impl->flows.push_back(state);
        return static_cast<int>(m_impl->flows.size()) - 1;
    }
    std::string error = CheckAttributes(spec.cc_type, spec.cc_attributes);
    if (error.empty())
    {
        error = CheckAttributes("ns3::TcpSocketBase", spec.socket_attributes);
    }
    if (!error.empty())
    {
        throw std::invalid_argument("flow " + spec.name + ": " + error);
    }
    TypeId ccType = TypeId::LookupByName(spec.cc_type);
    if (!ccType.IsChildOf(TcpCongestionOps::GetTypeId()))
    {
        throw std::invalid_argument("flow " + spec.name + ": " + spec.cc_type +
                                    " is not a TcpCongestionOps");
    }
    FlowState state;
    state.spec = spec;
    m_impl->flows.push_back(state);
    return static_cast<int>(m_impl->flows.size()) - 1;
}

void
Simulation::Build(double sampleIntervalS)
{
    if (m_impl->built)
    {
        throw std::logic_error("Build() called twice");
    }
    if (!(sampleIntervalS > 0))
    {
        throw std::invalid_argument("sample interval must be > 0");
    }
    m_impl->built = true;
    m_impl->sampleIntervalS = sampleIntervalS;
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    for (const FlowState& flow : m_impl->flows)
    {
        m_impl->numUngrouped += (flow.spec.group < 0);
    }
    std::size_t nextUngrouped = 0;
    for (size_t i = 0; i < m_impl->flows.size(); ++i)
    {
        FlowState& flow = m_impl->flows[i];
        m_impl->flowEntity.push_back(flow.spec.group < 0 ? nextUngrouped++
                                                         : m_impl->numUngrouped + flow.spec.group);
        if (flow.spec.group >= 0)
        {
            flow.group = &m_impl->groups[flow.spec.group];
        }
        Ptr<Node> src = m_impl->nodes.Get(flow.spec.src);
        Ptr<Node> dst = m_impl->nodes.Get(flow.spec.dst);
        flow.srcNodeId = src->GetId();
        Ptr<Ipv4> ipv4 = dst->GetObject<Ipv4>();
        if (ipv4->GetNInterfaces() < 2)
        {
            throw std::invalid_argument("flow " + flow.spec.name + ": destination has no link");
        }
        flow.dstAddress = ipv4->GetAddress(1, 0).GetLocal();
        if (!m_impl->sinks[flow.spec.dst])
        {
            auto sink = CreateObject<FlowSink>(m_impl.get());
            dst->AddApplication(sink);
            sink->SetStartTime(Seconds(0));
            m_impl->sinks[flow.spec.dst] = sink;
        }
        Ptr<Application> sender;
        if (flow.spec.udp)
        {
            sender = CreateObject<PoissonSender>(m_impl.get(), static_cast<int>(i));
            sender->SetStopTime(Seconds(flow.spec.stop_s));
        }
        else
        {
            sender = CreateObject<FlowSender>(m_impl.get(), static_cast<int>(i));
        }
        src->AddApplication(sender);
        sender->SetStartTime(Seconds(flow.spec.start_s));
    }
    Simulator::Schedule(Seconds(sampleIntervalS), &Simulation::Impl::Sample, m_impl.get());
}

void
Simulation::RunUntil(double tS)
{
    if (!m_impl->built)
    {
        throw std::logic_error("RunUntil() before Build()");
    }
    Time until = Seconds(tS);
    if (until <= Simulator::Now())
    {
        return;
    }
    Simulator::Stop(until - Simulator::Now());
    Simulator::Run();
    // Also run what was scheduled for exactly `until` before this call (e.g. the
    // sample of the last interval): the stop event above was inserted earlier.
    Simulator::Stop(Seconds(0));
    Simulator::Run();
}

double
Simulation::Now() const
{
    return Simulator::Now().GetSeconds();
}

} // namespace tcprepro
