// The object graph in one include: objects and edge observers, trackables and modules, lists and
// dicts, variables, and the walks over them.
#pragma once

#include "runtime/track/containers.h"
#include "runtime/track/object.h"
#include "runtime/track/trackable.h"
#include "runtime/track/variable.h"
#include "runtime/track/walk.h"
