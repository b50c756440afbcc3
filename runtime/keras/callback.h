// The callback base of fit and evaluate (tf.keras.callbacks.Callback); the built-in callbacks are
// in callbacks.h.
//
// Every hook gets the model. A hook that throws ends the call that ran it with that error; when fit
// fails, on_train_error runs instead of on_train_end (files are closed, backups kept). Epochs and
// batches count from 0, as Keras'.
#pragma once

#include <cstdint>

#include "runtime/core/refcount.h"

namespace cairn::keras {

class Model;
class Logs;

class Callback : public RefCounted {
 public:
  ~Callback() override = default;
  virtual void on_train_begin(Model&) {}
  virtual void on_train_end(Model&, const Logs&) {}
  // fit failed (a step, the data or another callback threw): release what on_train_begin took.
  virtual void on_train_error(Model&) {}
  virtual void on_epoch_begin(Model&, int64_t /*epoch*/) {}
  virtual void on_epoch_end(Model&, int64_t /*epoch*/, const Logs&) {}
  virtual void on_train_batch_begin(Model&, int64_t /*batch*/) {}
  virtual void on_train_batch_end(Model&, int64_t /*batch*/, const Logs&) {}
  virtual void on_test_begin(Model&) {}
  virtual void on_test_end(Model&, const Logs&) {}
  virtual void on_test_batch_end(Model&, int64_t /*batch*/, const Logs&) {}
  // Told the number of epochs and steps per epoch (-1 when unknown) before on_train_begin.
  virtual void set_params(int64_t /*epochs*/, int64_t /*steps*/) {}
  // Whether only the chief of a multi-worker job runs it (output: progress, events, checkpoints);
  // fit drops it on the other workers.
  virtual bool chief_only() const { return false; }
};

}  // namespace cairn::keras
