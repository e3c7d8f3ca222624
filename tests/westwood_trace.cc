// Single-flow trace of a congestion control (test helper for tests/test_ns3_models_westwood.py):
// one bulk TCP flow over a bottleneck with a small DropTail buffer; records the socket's
// ssthresh, cwnd, RTT samples and cumulative ACKs, and the model's EstimatedBW trace.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <vector>

namespace westwood_check
{

struct Series
{
    std::vector<double> time;
    std::vector<double> value;

    void Add(double v)
    {
        time.push_back(ns3::Simulator::Now().GetSeconds());
        value.push_back(v);
    }
};

struct Trace
{
    Series ssthresh;  // bytes, at each change
    Series cwnd;      // bytes, at each change
    Series bwe;       // bit/s, the model's EstimatedBW at each change
    Series rtt;       // s, every RTT sample (LastRTT)
    Series acked;     // bytes cumulatively acknowledged (HighestRxAck)
};

inline Trace g_trace;

inline void OnSs(uint32_t, uint32_t v) { g_trace.ssthresh.Add(v); }
inline void OnCwnd(uint32_t, uint32_t v) { g_trace.cwnd.Add(v); }
inline void OnBwe(ns3::DataRate, ns3::DataRate v) { g_trace.bwe.Add(v.GetBitRate()); }
inline void OnRtt(ns3::Time, ns3::Time v) { g_trace.rtt.Add(v.GetSeconds()); }
inline void OnAck(ns3::SequenceNumber32, ns3::SequenceNumber32 v) { g_trace.acked.Add(v.GetValue()); }

inline void Connect(ns3::Ptr<ns3::BulkSendApplication> app)
{
    using namespace ns3;
    Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(app->GetSocket());
    tcp->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&OnSs));
    tcp->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd));
    tcp->TraceConnectWithoutContext("LastRTT", MakeCallback(&OnRtt));
    tcp->TraceConnectWithoutContext("HighestRxAck", MakeCallback(&OnAck));
    PointerValue ops;
    tcp->GetAttribute("CongestionOps", ops);
    ops.Get<TcpCongestionOps>()->TraceConnectWithoutContext("EstimatedBW", MakeCallback(&OnBwe));
}

/// Run one flow of `cc` (an ns-3 TypeId) for `duration_s` over a bottleneck of `rate`
/// (e.g. "50Mbps"), one-way delay `delay` and a DropTail buffer of `buffer_pkts` packets.
inline const Trace& Run(const std::string& cc, const std::string& rate, const std::string& delay,
                        uint32_t buffer_pkts, uint32_t mss, double duration_s)
{
    using namespace ns3;
    g_trace = Trace();
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(cc));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(64 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(64 << 20));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TypeId::LookupByName("ns3::TcpClassicRecovery")));
    NodeContainer nodes;
    nodes.Create(3);  // sender, router, receiver
    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    access.SetChannelAttribute("Delay", StringValue("0ms"));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(rate));
    bottleneck.SetChannelAttribute("Delay", StringValue(delay));
    bottleneck.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
    NetDeviceContainer first = access.Install(nodes.Get(0), nodes.Get(1));
    NetDeviceContainer second = bottleneck.Install(nodes.Get(1), nodes.Get(2));
    InternetStackHelper stack;
    stack.Install(nodes);
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize",
                         StringValue(std::to_string(buffer_pkts) + "p"));
    tch.Install(second);
    Ipv4AddressHelper address;
    address.SetBase("10.1.1.0", "255.255.255.0");
    address.Assign(first);
    address.SetBase("10.1.2.0", "255.255.255.0");
    Ipv4InterfaceContainer far = address.Assign(second);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    uint16_t port = 5001;
    BulkSendHelper source("ns3::TcpSocketFactory", InetSocketAddress(far.GetAddress(1), port));
    ApplicationContainer apps = source.Install(nodes.Get(0));
    apps.Start(Seconds(0.0));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    sink.Install(nodes.Get(2)).Start(Seconds(0.0));
    Ptr<BulkSendApplication> app = DynamicCast<BulkSendApplication>(apps.Get(0));
    Simulator::Schedule(Seconds(0.001), &Connect, app);
    Simulator::Stop(Seconds(duration_s));
    Simulator::Run();
    Simulator::Destroy();
    return g_trace;
}

} // namespace westwood_check
