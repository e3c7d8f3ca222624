// Read numeric state that an ns-3 object publishes as a TracedValue (e.g. the
// delay window of TcpCompound): used by the Simulation sampler and the model
// checks, so a model only has to declare a trace source to be observable.
//
// SPDX-License-Identifier: GPL-2.0-only

#pragma once

#include "ns3/object.h"

#include <functional>
#include <string>

namespace tcprepro
{

/// Call `sink(new value)` whenever the traced value `source` of `object` changes.
/// Supports TracedValue<double, uint32_t, int32_t, uint64_t, bool>. Returns ""
/// on success, else why the source cannot be followed.
std::string ConnectTracedNumber(ns3::Ptr<ns3::Object> object,
                                const std::string& source,
                                std::function<void(double)> sink);

} // namespace tcprepro
