// Native replay of a tcprepro run, for benchmarks/bench (see src/tcprepro/bench.py).
//
// Reads the builder calls that tcprepro.ns3.backend.record_calls() writes (one
// tab-separated line per call), makes exactly the same calls on the same
// tcprepro::Simulation C++ library from a plain C++ main(), runs the event loop
// in the same chunks, and prints the results and timings as JSON. Python and
// cppyy are not involved at all, so the comparison isolates their cost.
//
// SPDX-License-Identifier: GPL-2.0-only

#include "tcprepro.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace
{

std::vector<std::string>
Split(const std::string& line)
{
    std::vector<std::string> fields;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, '\t'))
    {
        fields.push_back(field);
    }
    if (!line.empty() && line.back() == '\t')
    {
        fields.emplace_back();
    }
    return fields;
}

tcprepro::DirectionSpec
Direction(const std::vector<std::string>& f, size_t at)
{
    tcprepro::DirectionSpec d;
    d.rate_bps = std::stod(f[at]);
    d.delay_s = std::stod(f[at + 1]);
    d.qdisc_type = f[at + 2];
    d.qdisc_attributes = f[at + 3];
    d.device_queue_pkts = static_cast<uint32_t>(std::stoul(f[at + 4]));
    d.loss_rate = std::stod(f[at + 5]);
    d.trace_name = f[at + 6];
    return d;
}

} // namespace

int
main(int argc, char** argv)
{
    if (argc != 2)
    {
        std::cerr << "usage: replay CALLS.tsv\n";
        return 2;
    }
    std::ifstream input(argv[1]);
    std::vector<std::vector<std::string>> calls;
    uint32_t seed = 1;
    uint32_t run = 1;
    double duration = 0;
    double chunk = 0;
    for (std::string line; std::getline(input, line);)
    {
        auto f = Split(line);
        if (f.empty())
        {
            continue;
        }
        if (f[0] == "seed")
        {
            seed = static_cast<uint32_t>(std::stoul(f[1]));
            run = static_cast<uint32_t>(std::stoul(f[2]));
        }
        else if (f[0] == "run")
        {
            duration = std::stod(f[1]);
            chunk = std::stod(f[2]);
        }
        else
        {
            calls.push_back(f);
        }
    }
    auto setupStart = std::chrono::steady_clock::now();
    tcprepro::Simulation sim(seed, run);
    for (const auto& f : calls)
    {
        if (f[0] == "default")
        {
            sim.SetDefault(f[1], f[2]);
        }
        else if (f[0] == "node")
        {
            sim.AddNode(f[1]);
        }
        else if (f[0] == "node_sockets")
        {
            sim.SetNodeSocketAttributes(std::stoi(f[1]), f[2]);
        }
        else if (f[0] == "link")
        {
            sim.AddLink(std::stoi(f[1]), std::stoi(f[2]), Direction(f, 3), Direction(f, 10));
        }
        else if (f[0] == "group")
        {
            sim.AddGroup(f[1]);
        }
        else if (f[0] == "flow")
        {
            tcprepro::FlowSpec s;
            s.name = f[1];
            s.src = std::stoi(f[2]);
            s.dst = std::stoi(f[3]);
            s.cc_type = f[4];
            s.cc_attributes = f[5];
            s.socket_attributes = f[6];
            s.start_s = std::stod(f[7]);
            s.bytes = std::stoull(f[8]);
            s.pacing = (f[9] == "true");
            s.group = std::stoi(f[10]);
            s.udp = (f[11] == "true");
            s.rate_bps = std::stod(f[12]);
            s.packet_bytes = static_cast<uint32_t>(std::stoul(f[13]));
            s.stop_s = std::stod(f[14]);
            if (f.size() > 15)
            {
                s.max_ssthresh_pkts = static_cast<uint32_t>(std::stoul(f[15]));
            }
            if (f.size() > 16)
            {
                s.max_pacing_bps = std::stod(f[16]);
            }
            if (f.size() > 21)
            {
                s.ss_counting = std::stoi(f[17]);
                s.ca_counting = std::stoi(f[18]);
                s.ss_ack_limit = static_cast<uint32_t>(std::stoul(f[19]));
                s.host_cache = (f[20] == "true");
                s.request_bytes = std::stoull(f[21]);
            }
            sim.AddFlow(s);
        }
        else if (f[0] == "build")
        {
            sim.Build(std::stod(f[1]));
        }
    }
    auto loopStart = std::chrono::steady_clock::now();
    for (double now = 0; now < duration;)
    {
        double target = std::min(duration, now + chunk);
        sim.RunUntil(target);
        now = target;
    }
    auto loopEnd = std::chrono::steady_clock::now();
    auto rx = sim.FlowScalars("rx_bytes");
    auto drops = sim.LinkSeries("drops_pkts");
    auto links = sim.LinkNames();
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    std::printf("{\"setup_s\": %.6f, \"loop_s\": %.6f, \"events\": %llu, \"maxrss_kb\": %ld, ",
                std::chrono::duration<double>(loopStart - setupStart).count(),
                std::chrono::duration<double>(loopEnd - loopStart).count(),
                static_cast<unsigned long long>(sim.EventCount()),
                usage.ru_maxrss);
    std::printf("\"rx_bytes\": [");
    for (size_t i = 0; i < rx.size(); ++i)
    {
        std::printf("%s%.0f", i ? ", " : "", rx[i]);
    }
    std::printf("], \"drops_pkts\": [");
    size_t nLinks = links.size();
    for (size_t i = 0; i < nLinks; ++i)
    {
        double last = drops.empty() ? 0 : drops[drops.size() - nLinks + i];
        std::printf("%s%.0f", i ? ", " : "", last);
    }
    std::printf("]}\n");
    return 0;
}
