// PFQ/LQD queue disc (see pfq-lqd-queue-disc.h for the sources and the model).
//
// SPDX-License-Identifier: GPL-2.0-only

#include "pfq-lqd-queue-disc.h"

#include "ns3/boolean.h"
#include "ns3/log.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("PfqLqdQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(PfqLqdStorage);
NS_OBJECT_ENSURE_REGISTERED(PfqLqdQueueDisc);

// ----------------------------------------------------------------------------
// PfqLqdStorage

TypeId
PfqLqdStorage::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PfqLqdStorage")
                            .SetParent<Queue<QueueDiscItem>>()
                            .SetGroupName("Tcprepro")
                            .AddConstructor<PfqLqdStorage>();
    return tid;
}

bool
PfqLqdStorage::Enqueue(Ptr<QueueDiscItem> item)
{
    return DoEnqueue(GetContainer().end(), item);
}

Ptr<QueueDiscItem>
PfqLqdStorage::Dequeue()
{
    return DoDequeue(GetContainer().begin());
}

Ptr<QueueDiscItem>
PfqLqdStorage::Remove()
{
    return DoRemove(GetContainer().begin());
}

Ptr<const QueueDiscItem>
PfqLqdStorage::Peek() const
{
    return DoPeek(GetContainer().begin());
}

bool
PfqLqdStorage::Append(Ptr<QueueDiscItem> item, Position& where)
{
    Iterator inserted;
    if (!DoEnqueue(GetContainer().end(), item, inserted))
    {
        return false;
    }
    where = inserted;
    return true;
}

Ptr<QueueDiscItem>
PfqLqdStorage::Take(Position where)
{
    return DoDequeue(where);
}

// ----------------------------------------------------------------------------
// PfqLqdQueueDisc

TypeId
PfqLqdQueueDisc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::PfqLqdQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("Tcprepro")
            .AddConstructor<PfqLqdQueueDisc>()
            .AddAttribute("MaxSize",
                          "Shared buffer: packets stored for all flows together",
                          QueueSizeValue(QueueSize("1000p")),
                          MakeQueueSizeAccessor(&QueueDisc::SetMaxSize, &QueueDisc::GetMaxSize),
                          MakeQueueSizeChecker())
            .AddAttribute("DropFront",
                          "LQD drops the first (true) or the last (false) packet of the "
                          "longest queue",
                          BooleanValue(false),
                          MakeBooleanAccessor(&PfqLqdQueueDisc::m_dropFront),
                          MakeBooleanChecker());
    return tid;
}

PfqLqdQueueDisc::PfqLqdQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::MULTIPLE_QUEUES, QueueSizeUnit::PACKETS)
{
}

PfqLqdQueueDisc::~PfqLqdQueueDisc() = default;

bool
PfqLqdQueueDisc::CheckConfig()
{
    if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0)
    {
        NS_LOG_ERROR("PfqLqdQueueDisc has no classes and no packet filters");
        return false;
    }
    if (GetNInternalQueues() > 0)
    {
        NS_LOG_ERROR("PfqLqdQueueDisc creates its own internal queue");
        return false;
    }
    if (GetMaxSize().GetValue() == 0)
    {
        NS_LOG_ERROR("PfqLqdQueueDisc needs MaxSize >= 1 packet");
        return false;
    }
    // The storage never refuses a packet: the queue disc enforces MaxSize itself.
    m_storage = CreateObject<PfqLqdStorage>();
    m_storage->SetMaxSize(
        QueueSize(QueueSizeUnit::PACKETS, std::numeric_limits<uint32_t>::max()));
    AddInternalQueue(m_storage);
    return true;
}

void
PfqLqdQueueDisc::InitializeParams()
{
}

PfqLqdQueueDisc::Key
PfqLqdQueueDisc::LongestFlow(Key arriving) const
{
    auto found = m_flows.find(arriving);
    Key longest = arriving;
    uint32_t most = (found == m_flows.end() ? 0 : found->second.Count()) + 1;
    for (const auto& [key, flow] : m_flows)
    {
        if (flow.Count() > most)
        {
            most = flow.Count();
            longest = key;
        }
    }
    return longest;
}

void
PfqLqdQueueDisc::DropStored(Key key, bool front)
{
    Flow& flow = m_flows.at(key);
    Ptr<QueueDiscItem> item;
    if (!flow.fair.empty())
    {
        const Stored victim = front ? flow.fair.front() : flow.fair.back();
        const Stored head = flow.fair.front();
        m_schedule.erase({head.start, head.order, key});
        if (front)
        {
            // the flow's later packets move up by the dropped packet's length, so that
            // the flow is not charged for it
            const double length = (*victim.where)->GetSize();
            flow.fair.pop_front();
            for (Stored& stored : flow.fair)
            {
                stored.start -= length;
            }
            flow.lastFinish -= length;
        }
        else
        {
            flow.fair.pop_back();
            flow.lastFinish = victim.start; // the dropped packet is not charged
        }
        if (!flow.fair.empty())
        {
            const Stored& next = flow.fair.front();
            m_schedule.insert({next.start, next.order, key});
        }
        item = m_storage->Take(victim.where);
    }
    else
    {
        NS_ASSERT(flow.priorityPackets > 0);
        auto matches = [key](const auto& entry) { return std::get<0>(entry) == key; };
        auto victim = front ? std::find_if(m_priority.begin(), m_priority.end(), matches)
                            : std::prev(std::find_if(m_priority.rbegin(),
                                                     m_priority.rend(),
                                                     matches)
                                            .base());
        if (!front)
        {
            flow.lastFinish = std::get<2>(*victim);
        }
        item = m_storage->Take(std::get<1>(*victim));
        m_priority.erase(victim);
        --flow.priorityPackets;
    }
    DropAfterDequeue(item, LQD_DROP);
}

bool
PfqLqdQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    const Key key = item->Hash(0);
    if (GetCurrentSize().GetValue() >= GetMaxSize().GetValue())
    {
        const Key longest = LongestFlow(key);
        const bool arrivingHasStored =
            m_flows.count(key) > 0 && m_flows.at(key).Count() > 0;
        if (longest == key && !(m_dropFront && arrivingHasStored))
        {
            DropBeforeEnqueue(item, LQD_DROP);
            return false;
        }
        DropStored(longest, m_dropFront);
        Forget(longest);
    }

    Flow& flow = m_flows[key];
    const double start = std::max(m_virtualTime, flow.lastFinish);
    const bool priority = flow.lastFinish <= m_virtualTime;
    PfqLqdStorage::Position where;
    if (!m_storage->Append(item, where))
    {
        NS_FATAL_ERROR("PfqLqdQueueDisc: the internal storage refused a packet");
    }
    flow.lastFinish = start + item->GetSize();
    m_maxFinish = std::max(m_maxFinish, flow.lastFinish);
    if (priority)
    {
        m_priority.emplace_back(key, where, start);
        ++flow.priorityPackets;
    }
    else
    {
        flow.fair.push_back(Stored{where, start, m_order++});
        if (flow.fair.size() == 1)
        {
            m_schedule.insert({start, flow.fair.front().order, key});
        }
    }
    return true;
}

Ptr<QueueDiscItem>
PfqLqdQueueDisc::DoDequeue()
{
    Ptr<QueueDiscItem> item;
    Key key = 0;
    if (!m_priority.empty())
    {
        auto [flowKey, where, start] = m_priority.front();
        m_priority.pop_front();
        key = flowKey;
        --m_flows.at(key).priorityPackets;
        item = m_storage->Take(where);
    }
    else if (!m_schedule.empty())
    {
        auto [start, order, flowKey] = *m_schedule.begin();
        m_schedule.erase(m_schedule.begin());
        key = flowKey;
        Flow& flow = m_flows.at(key);
        const Stored head = flow.fair.front();
        flow.fair.pop_front();
        if (!flow.fair.empty())
        {
            const Stored& next = flow.fair.front();
            m_schedule.insert({next.start, next.order, key});
        }
        m_virtualTime = start;
        item = m_storage->Take(head.where);
    }
    else
    {
        return nullptr;
    }
    if (m_priority.empty() && m_schedule.empty())
    {
        // End of a busy period (Goyal et al.): v = largest finish tag given so far.
        m_virtualTime = std::max(m_virtualTime, m_maxFinish);
    }
    Forget(key);
    if (++m_dequeuesSinceSweep >= 1024)
    {
        ForgetIdleFlows();
    }
    return item;
}

void
PfqLqdQueueDisc::Forget(Key key)
{
    auto it = m_flows.find(key);
    if (it != m_flows.end() && it->second.Count() == 0 && it->second.lastFinish <= m_virtualTime)
    {
        m_flows.erase(it); // a fresh flow state would behave identically
    }
}

void
PfqLqdQueueDisc::ForgetIdleFlows()
{
    m_dequeuesSinceSweep = 0;
    for (auto it = m_flows.begin(); it != m_flows.end();)
    {
        if (it->second.Count() == 0 && it->second.lastFinish <= m_virtualTime)
        {
            it = m_flows.erase(it);
        }
        else
        {
            ++it;
        }
    }
}

void
PfqLqdQueueDisc::ForEachFlow(
    const std::function<void(Ptr<const QueueDiscItem>, uint32_t)>& visit) const
{
    std::map<Key, Ptr<const QueueDiscItem>> sample;
    for (const auto& [key, where, start] : m_priority)
    {
        sample.emplace(key, *where);
    }
    for (const auto& [key, flow] : m_flows)
    {
        if (flow.Count() == 0)
        {
            continue;
        }
        Ptr<const QueueDiscItem> item =
            flow.fair.empty() ? sample.at(key) : Ptr<const QueueDiscItem>(*flow.fair.front().where);
        visit(item, flow.Count());
    }
}

std::size_t
PfqLqdQueueDisc::GetNFlows() const
{
    return m_flows.size();
}

} // namespace ns3
