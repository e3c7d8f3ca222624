// PFQ/LQD: per-flow fair queueing with priority to flows below the fair rate
// (PFQ) and one shared buffer from which the longest queue loses a packet when
// it is full (LQD).
//
// Sources:
//  - scheduler: A. Kortebi, S. Oueslati, J. Roberts, "Cross-protect: implicit
//    service differentiation and admission control", IEEE HPSR 2004 (PFQ =
//    start-time fair queueing plus a priority queue for the packets of flows
//    that are not backlogged, i.e. that send below the current fair rate);
//    start-time fair queueing as in P. Goyal, H. M. Vin, H. Cheng, "Start-time
//    fair queueing", IEEE/ACM ToN 5(5), 1997;
//  - buffer management: B. Suter, T. V. Lakshman, D. Stiliadis, A. K. Choudhury,
//    "Design considerations for supporting TCP with per-flow queueing", IEEE
//    INFOCOM 1998 (longest queue drop, with a drop-from-front variant);
//  - use in study B: Auge, thesis chapter 5 (PFQ with LQD in ns-2; bottleneck
//    buffers of B = 20, 100, 625 packets shared by all flows).
//
// Model:
//  - flows are told apart by the 5-tuple hash of the IPv4 header (ns-3's
//    Ipv4QueueDiscItem::Hash); every flow has equal weight;
//  - start-time fair queueing in bytes: a packet of length L of flow f arriving
//    at virtual time v gets start tag S = max(v, F_f) and finish tag
//    F_f = S + L; non-priority packets are served in increasing S (ties: arrival
//    order), and v is the start tag of the last such packet served; when the
//    queue empties, v jumps to the largest finish tag given so far;
//  - PFQ priority: a packet whose flow is not ahead of the virtual time
//    (F_f <= v at its arrival, so S = v) joins a FIFO served before the fair
//    queue. A flow sending below the fair rate never gets ahead of v, so all its
//    packets are served with priority; a flow above it has only the packets
//    beyond its share in the fair queue;
//  - LQD: at most MaxSize packets are stored in all. A packet arriving to a full
//    buffer makes the flow with the most stored packets (counting the arrival;
//    ties go to the arriving flow) lose one: the arriving packet itself if that
//    flow is the arriving one, else the last packet of that flow (its finish tag
//    is rolled back so it is not charged), or, with DropFront, the first packet
//    of that flow (the tags of its later packets move back by the dropped length,
//    for the same reason). Drops fire the standard QueueDisc drop traces.
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include "ns3/queue-disc.h"
#include "ns3/queue.h"

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace ns3
{

/// Storage of every packet of a PfqLqdQueueDisc (its single internal queue),
/// with removal at any position so that the queue disc's counters and traces
/// stay exact whichever packet LQD drops.
class PfqLqdStorage : public Queue<QueueDiscItem>
{
  public:
    static TypeId GetTypeId();
    using Position = Queue<QueueDiscItem>::ConstIterator;

    bool Enqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> Dequeue() override;
    Ptr<QueueDiscItem> Remove() override;
    Ptr<const QueueDiscItem> Peek() const override;

    /// Append `item`; on success `where` locates it.
    bool Append(Ptr<QueueDiscItem> item, Position& where);
    /// Take the packet at `where` out (fires the Dequeue trace).
    Ptr<QueueDiscItem> Take(Position where);
};

class PfqLqdQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId();
    PfqLqdQueueDisc();
    ~PfqLqdQueueDisc() override;

    static constexpr const char* LQD_DROP = "Longest queue drop (buffer full)";

    /// Call `visit(first stored packet, stored packets)` for every flow with stored packets.
    void ForEachFlow(
        const std::function<void(Ptr<const QueueDiscItem>, uint32_t)>& visit) const;
    /// Number of flows the scheduler currently keeps state for.
    std::size_t GetNFlows() const;

  private:
    struct Stored
    {
        PfqLqdStorage::Position where;
        double start;
        uint64_t order; //!< arrival order, breaks ties between equal start tags
    };

    struct Flow
    {
        std::deque<Stored> fair;       //!< packets waiting in the fair queue
        uint32_t priorityPackets = 0; //!< packets of this flow in the priority FIFO
        double lastFinish = 0;        //!< finish tag of the flow's last accepted packet

        uint32_t Count() const
        {
            return static_cast<uint32_t>(fair.size()) + priorityPackets;
        }
    };

    using Key = uint32_t;

    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    bool CheckConfig() override;
    void InitializeParams() override;

    /// LQD: the flow to lose a packet when `arriving` brings one more to a full buffer.
    Key LongestFlow(Key arriving) const;
    /// Drop one stored packet of `key` (front or back), rolling back tags for a back drop.
    void DropStored(Key key, bool front);
    /// Forget flows that are idle and not ahead of the virtual time.
    void Forget(Key key);
    void ForgetIdleFlows();

    bool m_dropFront{false};
    Ptr<PfqLqdStorage> m_storage;
    std::map<Key, Flow> m_flows;
    std::deque<std::tuple<Key, PfqLqdStorage::Position, double>> m_priority; //!< (flow, packet, S)
    std::set<std::tuple<double, uint64_t, Key>> m_schedule; //!< (S, order, flow) of fair heads
    double m_virtualTime{0};
    double m_maxFinish{0};
    uint64_t m_order{0};
    uint32_t m_dequeuesSinceSweep{0};
};

} // namespace ns3
