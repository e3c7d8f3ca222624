// SPDX-License-Identifier: GPL-2.0-only

#include "trace-state.h"

#include "ns3/callback.h"
#include "ns3/type-id.h"

namespace tcprepro
{

using namespace ns3;

namespace
{

template <typename T>
bool
Connect(Ptr<Object> object, const std::string& source, const std::function<void(double)>& sink)
{
    Callback<void, T, T> callback([sink](T /*oldValue*/, T newValue) {
        sink(static_cast<double>(newValue));
    });
    return object->TraceConnectWithoutContext(source, callback);
}

} // namespace

std::string
ConnectTracedNumber(Ptr<Object> object, const std::string& source, std::function<void(double)> sink)
{
    TypeId::TraceSourceInformation info;
    TypeId type = object->GetInstanceTypeId();
    if (!type.LookupTraceSourceByName(source, &info))
    {
        return type.GetName() + " has no trace source '" + source + "'";
    }
    const std::string& signature = info.callback;
    bool connected = false;
    if (signature == "ns3::TracedValueCallback::Double")
    {
        connected = Connect<double>(object, source, sink);
    }
    else if (signature == "ns3::TracedValueCallback::Uint32")
    {
        connected = Connect<uint32_t>(object, source, sink);
    }
    else if (signature == "ns3::TracedValueCallback::Int32")
    {
        connected = Connect<int32_t>(object, source, sink);
    }
    else if (signature == "ns3::TracedValueCallback::Uint64")
    {
        connected = Connect<uint64_t>(object, source, sink);
    }
    else if (signature == "ns3::TracedValueCallback::Bool")
    {
        connected = Connect<bool>(object, source, sink);
    }
    else
    {
        return type.GetName() + "::" + source + " is not a numeric traced value (" + signature +
               ")";
    }
    return connected ? "" : "cannot connect to " + type.GetName() + "::" + source;
}

} // namespace tcprepro
