// Checkpoints, the checkpoint manager and the checkpoint reader in the C API.
#include <cstdlib>
#include <cstring>
#include <memory>

#include "capi/internal/object_handles.h"
#include "capi/internal/options.h"
#include "runtime/checkpoint/checkpoint.h"

using namespace cairn;
using cairn::capi::require;
using cairn::capi::read_options;

struct cairn_checkpoint {
  std::shared_ptr<ckpt::Checkpoint> ckpt;
  cairn_object root;  // lent by cairn_checkpoint_root
};

struct cairn_restore_status {
  std::shared_ptr<ckpt::RestoreState> state;  // null: restore(NULL), nothing was restored
};

struct cairn_checkpoint_manager {
  std::shared_ptr<ckpt::Checkpoint> ckpt;
  std::unique_ptr<ckpt::CheckpointManager> manager;
};

struct cairn_checkpoint_reader {
  ckpt::Reader reader;
};

namespace {

void hand_out_path(const std::string& path, char** path_out, const char* fn) {
  if (path_out) *path_out = capi::malloc_string(path, fn);
}

bool is_intact_checkpoint(const std::string& path) {
  try {
    ckpt::Reader::open(path);
    return true;
  } catch (...) {
    return false;
  }
}

const ckpt::TensorInfo* entry_at(const cairn_checkpoint_reader* r, size_t i) {
  if (!r || i >= r->reader.entries().size()) return nullptr;
  return &r->reader.entries()[i];
}

[[noreturn]] void fail_no_checkpoint(const char* fn) {
  raise(Code::FailedPrecondition, "{}: no checkpoint was restored (the restore path was NULL)", fn);
}

}  // namespace

extern "C" {

cairn_status* cairn_checkpoint_create(cairn_context* ctx, const char* const* names, cairn_object* const* objects,
                                      size_t n, cairn_checkpoint** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_create";
  require(out, fn, "out");
  *out = nullptr;
  require(ctx, fn, "ctx");
  if (n > 0) {
    require(names, fn, "names");
    require(objects, fn, "objects");
  }
  std::vector<std::pair<std::string, Ref<Object>>> children;
  for (size_t i = 0; i < n; ++i) {
    if (!names[i]) raise(Code::InvalidArgument, "{}: names[{}] is NULL", fn, i);
    if (!objects[i]) raise(Code::InvalidArgument, "{}: objects[{}] (\"{}\") is NULL", fn, i, names[i]);
    children.emplace_back(names[i], objects[i]->obj);
  }
  auto c = std::make_shared<ckpt::Checkpoint>(*ctx->ctx, children);
  Ref<Object> root = Ref<Object>::share(&c->root());
  *out = new cairn_checkpoint{std::move(c), cairn_object{std::move(root)}};
  CAIRN_API_END
}

cairn_object* cairn_checkpoint_root(cairn_checkpoint* ckpt) { return ckpt ? &ckpt->root : nullptr; }

cairn_status* cairn_checkpoint_set_options(cairn_checkpoint* ckpt, const cairn_checkpoint_options* user_opts) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_set_options";
  require(ckpt, fn, "ckpt");
  const cairn_checkpoint_options opts = read_options(user_opts, fn);
  ckpt::CheckpointOptions o;
  o.compress = opts.compress != CAIRN_FALSE;
  o.async = opts.async != CAIRN_FALSE;
  o.fsync = opts.fsync != CAIRN_FALSE;
  ckpt->ckpt->sync();  // options change between saves, never under a running one
  ckpt->ckpt->set_options(o);
  CAIRN_API_END
}

cairn_status* cairn_checkpoint_save_counter(cairn_checkpoint* ckpt, int64_t* out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_save_counter";
  require(out, fn, "out");
  *out = 0;
  require(ckpt, fn, "ckpt");
  *out = ckpt->ckpt->save_counter_value();
  CAIRN_API_END
}

cairn_status* cairn_checkpoint_save(cairn_checkpoint* ckpt, const char* prefix, char** path_out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_save";
  if (path_out) *path_out = nullptr;
  require(ckpt, fn, "ckpt");
  require(prefix, fn, "prefix");
  hand_out_path(ckpt->ckpt->save(prefix), path_out, fn);
  CAIRN_API_END
}

cairn_status* cairn_checkpoint_write(cairn_checkpoint* ckpt, const char* path) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_write";
  require(ckpt, fn, "ckpt");
  require(path, fn, "path");
  ckpt->ckpt->write(path);
  CAIRN_API_END
}

cairn_status* cairn_checkpoint_sync(cairn_checkpoint* ckpt) {
  CAIRN_API_BEGIN
  require(ckpt, "cairn_checkpoint_sync", "ckpt");
  ckpt->ckpt->sync();
  CAIRN_API_END
}

cairn_status* cairn_checkpoint_restore(cairn_checkpoint* ckpt, const char* path, cairn_restore_status** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_restore";
  require(out, fn, "out");
  *out = nullptr;
  require(ckpt, fn, "ckpt");
  if (!path) {
    *out = new cairn_restore_status{nullptr};
    return nullptr;
  }
  *out = new cairn_restore_status{ckpt->ckpt->restore(path)};
  CAIRN_API_END
}

cairn_status* cairn_restore_status_assert_consumed(const cairn_restore_status* rs) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_restore_status_assert_consumed";
  require(rs, fn, "status");
  if (!rs->state) fail_no_checkpoint(fn);
  rs->state->assert_consumed();
  CAIRN_API_END
}

cairn_status* cairn_restore_status_assert_existing_objects_matched(const cairn_restore_status* rs) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_restore_status_assert_existing_objects_matched";
  require(rs, fn, "status");
  if (!rs->state) fail_no_checkpoint(fn);
  rs->state->assert_existing_objects_matched();
  CAIRN_API_END
}

void cairn_restore_status_expect_partial(cairn_restore_status* rs) {
  if (rs && rs->state) rs->state->expect_partial();
}

void cairn_restore_status_free(cairn_restore_status* rs) { delete rs; }

void cairn_checkpoint_free(cairn_checkpoint* ckpt) { delete ckpt; }

// ---- manager ----

cairn_status* cairn_checkpoint_manager_create(cairn_checkpoint* ckpt, const char* directory,
                                              const cairn_checkpoint_manager_options* user_opts,
                                              cairn_checkpoint_manager** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_manager_create";
  require(out, fn, "out");
  *out = nullptr;
  require(ckpt, fn, "ckpt");
  require(directory, fn, "directory");
  const cairn_checkpoint_manager_options opts = read_options(user_opts, fn);
  ckpt::ManagerOptions o;
  if (opts.checkpoint_name) o.checkpoint_name = opts.checkpoint_name;
  o.max_to_keep = opts.max_to_keep;
  o.keep_checkpoint_every_n_hours = opts.keep_checkpoint_every_n_hours;
  auto manager = std::make_unique<ckpt::CheckpointManager>(directory, o, is_intact_checkpoint);
  *out = new cairn_checkpoint_manager{ckpt->ckpt, std::move(manager)};
  CAIRN_API_END
}

cairn_status* cairn_checkpoint_manager_save(cairn_checkpoint_manager* m, int64_t checkpoint_number, char** path_out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_manager_save";
  if (path_out) *path_out = nullptr;
  require(m, fn, "manager");
  ckpt::Checkpoint& c = *m->ckpt;
  c.sync();  // an earlier background failure surfaces here, before anything changes
  int64_t counter = c.increment_save_counter(fn);
  int64_t number = checkpoint_number >= 0 ? checkpoint_number : counter;
  std::string path = m->manager->path_for(number);
  if (!c.options().async) {
    m->manager->save(number, [&](const std::string& p) { c.write_snapshot(c.snapshot(), p); });
  } else {
    // Snapshot now (tensors are immutable); write and update the manager's state in the background.
    auto snap = std::make_shared<ckpt::Checkpoint::Snapshot>(c.snapshot());
    ckpt::CheckpointManager* manager = m->manager.get();
    ckpt::Checkpoint* cp = m->ckpt.get();
    c.writer().start([manager, cp, snap, number] {
      manager->save(number, [&](const std::string& p) { cp->write_snapshot(*snap, p); });
    });
  }
  hand_out_path(path, path_out, fn);
  CAIRN_API_END
}

const char* cairn_checkpoint_manager_latest(const cairn_checkpoint_manager* m) {
  if (!m) return nullptr;
  m->ckpt->writer().join();  // reflect a finished background save
  const auto& latest = m->manager->latest();
  return latest ? latest->c_str() : nullptr;
}

size_t cairn_checkpoint_manager_count(const cairn_checkpoint_manager* m) {
  if (!m) return 0;
  m->ckpt->writer().join();
  return m->manager->checkpoints().size();
}

const char* cairn_checkpoint_manager_path(const cairn_checkpoint_manager* m, size_t i) {
  if (!m) return nullptr;
  m->ckpt->writer().join();
  const auto& paths = m->manager->checkpoints();
  return i < paths.size() ? paths[i].c_str() : nullptr;
}

void cairn_checkpoint_manager_free(cairn_checkpoint_manager* m) {
  if (!m) return;
  m->ckpt->writer().join();  // the background job uses the manager
  delete m;
}

// ---- reader ----

cairn_status* cairn_checkpoint_reader_open(const char* path, cairn_checkpoint_reader** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_reader_open";
  require(out, fn, "out");
  *out = nullptr;
  require(path, fn, "path");
  *out = new cairn_checkpoint_reader{ckpt::Reader::open(path)};
  CAIRN_API_END
}

size_t cairn_checkpoint_reader_count(const cairn_checkpoint_reader* r) { return r ? r->reader.entries().size() : 0; }

const char* cairn_checkpoint_reader_key(const cairn_checkpoint_reader* r, size_t i) {
  const ckpt::TensorInfo* e = entry_at(r, i);
  return e ? e->key.c_str() : nullptr;
}

cairn_dtype cairn_checkpoint_reader_dtype(const cairn_checkpoint_reader* r, size_t i) {
  const ckpt::TensorInfo* e = entry_at(r, i);
  return e ? static_cast<cairn_dtype>(e->dtype) : CAIRN_INVALID_DTYPE;
}

size_t cairn_checkpoint_reader_rank(const cairn_checkpoint_reader* r, size_t i) {
  const ckpt::TensorInfo* e = entry_at(r, i);
  return e ? static_cast<size_t>(e->shape.rank()) : 0;
}

int64_t cairn_checkpoint_reader_dim(const cairn_checkpoint_reader* r, size_t i, size_t axis) {
  const ckpt::TensorInfo* e = entry_at(r, i);
  if (!e || axis >= static_cast<size_t>(e->shape.rank())) return -1;
  return e->shape[static_cast<int>(axis)];
}

cairn_status* cairn_checkpoint_reader_load(const cairn_checkpoint_reader* r, cairn_context* ctx, const char* key,
                                           cairn_tensor** out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_reader_load";
  require(out, fn, "out");
  *out = nullptr;
  require(r, fn, "reader");
  require(ctx, fn, "ctx");
  require(key, fn, "key");
  *out = capi::new_tensor(r->reader.load(key, ctx->ctx->default_device()));
  CAIRN_API_END
}

cairn_status* cairn_checkpoint_reader_load_string(const cairn_checkpoint_reader* r, const char* key, char** out,
                                                  size_t* size) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_reader_load_string";
  require(out, fn, "out");
  *out = nullptr;
  require(size, fn, "size");
  *size = 0;
  require(r, fn, "reader");
  require(key, fn, "key");
  std::string bytes = r->reader.load_string(key);
  *out = capi::malloc_string(bytes, fn);
  *size = bytes.size();
  CAIRN_API_END
}

void cairn_checkpoint_reader_free(cairn_checkpoint_reader* r) { delete r; }

}  // extern "C"
