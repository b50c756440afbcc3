// Checkpoints, the checkpoint manager, the checkpoint reader (over Cairn, TensorFlow and
// safetensors files) and a module's weights by name in the C API.
#include <cstdlib>
#include <cstring>
#include <memory>

#include <nlohmann/json.hpp>

#include "capi/internal/mpi.h"
#include "capi/internal/object_handles.h"
#include "capi/internal/options.h"
#include "runtime/checkpoint/checkpoint.h"
#include "runtime/checkpoint/collective_group.h"
#include "runtime/checkpoint/shard_index.h"
#include "runtime/checkpoint/sharded_save.h"
#include "runtime/checkpoint/module_weights.h"
#include "runtime/checkpoint/tf_restore.h"
#include "runtime/checkpoint/weights_file.h"
#include "runtime/eager/device_scope.h"

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
  std::unique_ptr<ckpt::CollectiveShardGroup> shards;  // set by cairn_checkpoint_manager_shard
};

struct cairn_checkpoint_reader {
  std::unique_ptr<ckpt::WeightsFile> file;
  std::vector<std::pair<std::string, std::string>> metadata;  // file->metadata(), indexable
};

namespace {

void hand_out_path(const std::string& path, char** path_out, const char* fn) {
  if (path_out) *path_out = capi::malloc_string(path, fn);
}

bool is_readable_weights(const std::string& path) {
  try {
    ckpt::WeightsFile::open(path);
    return true;
  } catch (...) {
    return false;
  }
}

const ckpt::WeightsEntry* entry_at(const cairn_checkpoint_reader* r, size_t i) {
  if (!r || i >= r->file->entries().size()) return nullptr;
  return &r->file->entries()[i];
}

cairn_weights_format to_c(ckpt::WeightsFormat f) {
  switch (f) {
    case ckpt::WeightsFormat::Cairn: return CAIRN_WEIGHTS_CAIRN;
    case ckpt::WeightsFormat::TfBundle: return CAIRN_WEIGHTS_TF;
    case ckpt::WeightsFormat::Safetensors: return CAIRN_WEIGHTS_SAFETENSORS;
  }
  return CAIRN_WEIGHTS_AUTO;
}

// A format to write; INVALID_ARGUMENT for AUTO and values outside the enum.
ckpt::WeightsFormat format_to_write(cairn_weights_format f, const char* fn) {
  switch (f) {
    case CAIRN_WEIGHTS_CAIRN: return ckpt::WeightsFormat::Cairn;
    case CAIRN_WEIGHTS_TF: return ckpt::WeightsFormat::TfBundle;
    case CAIRN_WEIGHTS_SAFETENSORS: return ckpt::WeightsFormat::Safetensors;
    case CAIRN_WEIGHTS_AUTO:
      raise(Code::InvalidArgument, "{}: format CAIRN_WEIGHTS_AUTO is for reading; name the format to write", fn);
  }
  raise(Code::InvalidArgument, "{}: unknown format {}", fn, static_cast<int>(f));
}

// The entry `key` of a reader, checked to be (or not to be) a string value.
const ckpt::WeightsEntry& entry_named(const cairn_checkpoint_reader* r, const char* key, bool string, const char* fn) {
  const ckpt::WeightsEntry& e = r->file->entry(key);
  if (string && e.dtype != DType::String)
    raise(Code::InvalidArgument, "{}: '{}' is {}, not a string value", fn, key, e.type_text);
  if (!string && e.dtype == DType::String)
    raise(Code::InvalidArgument, "{}: '{}' is a string value; read it with cairn_checkpoint_reader_load_string", fn,
          key);
  return e;
}

// "__metadata__" strings from a JSON object of strings (cairn_weights_options.metadata_json).
std::map<std::string, std::string> parse_metadata(const char* json, const char* fn) {
  std::map<std::string, std::string> out;
  if (!json) return out;
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) raise(Code::InvalidArgument, "{}: metadata_json is not a JSON object", fn);
  for (auto& [key, value] : j.items()) {
    if (!value.is_string())
      raise(Code::InvalidArgument, "{}: metadata_json: the value of '{}' is not a string (safetensors keeps strings)",
            fn, key);
    out[key] = value.get<std::string>();
  }
  return out;
}

ckpt::ModuleWeightsOptions module_weights_options(const cairn_weights_options* user, const char* fn) {
  const cairn_weights_options o = read_options(user, fn);
  ckpt::ModuleWeightsOptions m;
  if (o.prefix) m.prefix = o.prefix;
  if (o.separator) m.separator = o.separator;
  if (m.separator.empty()) raise(Code::InvalidArgument, "{}: separator is empty", fn);
  m.allow_missing = o.allow_missing != 0;
  m.allow_unused = o.allow_unused != 0;
  m.checksums = o.checksums != 0;
  m.max_shard_bytes = o.max_shard_bytes;
  m.metadata = parse_metadata(o.metadata_json, fn);
  return m;
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
  switch (ckpt::WeightsFile::detect(path)) {
    case ckpt::WeightsFormat::Cairn:
      *out = new cairn_restore_status{ckpt->ckpt->restore(path)};
      break;
    case ckpt::WeightsFormat::TfBundle:
      *out = new cairn_restore_status{tfckpt::restore_tf(*ckpt->ckpt, path)};
      break;
    case ckpt::WeightsFormat::Safetensors:
      // Told by content alone, a damaged Cairn file looks like safetensors: it gets Cairn's error.
      if (!is_readable_weights(path)) {
        *out = new cairn_restore_status{ckpt->ckpt->restore(path)};
        break;
      }
      raise(Code::InvalidArgument,
            "{}: {} is safetensors, which has no object graph to restore by; load it by name "
            "(cairn_object_load_weights)",
            fn, path);
  }
  CAIRN_API_END
}

cairn_status* cairn_checkpoint_export(cairn_checkpoint* ckpt, const char* path, cairn_weights_format format,
                                      const cairn_export_options* user_opts) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_export";
  require(ckpt, fn, "ckpt");
  require(path, fn, "path");
  const cairn_export_options o = read_options(user_opts, fn);
  switch (format_to_write(format, fn)) {
    case ckpt::WeightsFormat::Cairn:
      ckpt->ckpt->write(path);
      break;
    case ckpt::WeightsFormat::TfBundle: {
      tfckpt::TfSaveOptions tf;
      tf.keras_names = o.keras_names != 0;
      tf.save_counter = o.save_counter != 0;
      tfckpt::write_tf(*ckpt->ckpt, path, tf);
      break;
    }
    case ckpt::WeightsFormat::Safetensors: {
      ckpt::Checkpoint::Snapshot snap = ckpt->ckpt->snapshot();
      std::vector<ckpt::WeightsValue> values;
      for (auto& e : snap.entries)
        if (!e.is_string) values.push_back({e.key, tensor_on_device(e.tensor, ckpt->ckpt->context().cpu())});
      ckpt::write_weights(ckpt::WeightsFormat::Safetensors, path, values);
      break;
    }
  }
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
  auto manager = std::make_unique<ckpt::CheckpointManager>(directory, o, ckpt::is_intact_checkpoint);
  *out = new cairn_checkpoint_manager{ckpt->ckpt, std::move(manager)};
  CAIRN_API_END
}

cairn_status* cairn_checkpoint_manager_save(cairn_checkpoint_manager* m, int64_t checkpoint_number, char** path_out) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_manager_save";
  if (path_out) *path_out = nullptr;
  require(m, fn, "manager");
  ckpt::Checkpoint& c = *m->ckpt;
  if (m->shards) {
    hand_out_path(ckpt::save_sharded(c, *m->manager, *m->shards, checkpoint_number), path_out, fn);
    return nullptr;
  }
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

cairn_status* cairn_checkpoint_manager_shard(cairn_checkpoint_manager* m, cairn_mpi* mpi) {
  CAIRN_API_BEGIN
  require(m, "cairn_checkpoint_manager_shard", "manager");
  m->ckpt->writer().join();  // a background save of the unsharded kind finishes first
  m->shards = mpi ? std::make_unique<ckpt::CollectiveShardGroup>(mpi->group, mpi->group->rank()) : nullptr;
  CAIRN_API_END
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
  auto r = std::make_unique<cairn_checkpoint_reader>();
  r->file = ckpt::WeightsFile::open(path);
  r->metadata.assign(r->file->metadata().begin(), r->file->metadata().end());
  *out = r.release();
  CAIRN_API_END
}

size_t cairn_checkpoint_reader_count(const cairn_checkpoint_reader* r) { return r ? r->file->entries().size() : 0; }

const char* cairn_checkpoint_reader_key(const cairn_checkpoint_reader* r, size_t i) {
  const ckpt::WeightsEntry* e = entry_at(r, i);
  return e ? e->key.c_str() : nullptr;
}

cairn_dtype cairn_checkpoint_reader_dtype(const cairn_checkpoint_reader* r, size_t i) {
  const ckpt::WeightsEntry* e = entry_at(r, i);
  return e ? static_cast<cairn_dtype>(e->dtype) : CAIRN_INVALID_DTYPE;
}

const char* cairn_checkpoint_reader_type_name(const cairn_checkpoint_reader* r, size_t i) {
  const ckpt::WeightsEntry* e = entry_at(r, i);
  return e ? e->type_text.c_str() : nullptr;
}

size_t cairn_checkpoint_reader_rank(const cairn_checkpoint_reader* r, size_t i) {
  const ckpt::WeightsEntry* e = entry_at(r, i);
  return e ? static_cast<size_t>(e->shape.rank()) : 0;
}

int64_t cairn_checkpoint_reader_dim(const cairn_checkpoint_reader* r, size_t i, size_t axis) {
  const ckpt::WeightsEntry* e = entry_at(r, i);
  if (!e || axis >= static_cast<size_t>(e->shape.rank())) return -1;
  return e->shape[static_cast<int>(axis)];
}

cairn_weights_format cairn_checkpoint_reader_format(const cairn_checkpoint_reader* r) {
  return r ? to_c(r->file->format()) : CAIRN_WEIGHTS_AUTO;
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
  const ckpt::WeightsEntry& e = entry_named(r, key, /*string=*/false, fn);
  *out = capi::new_tensor(r->file->load(e, scoped_device(*ctx->ctx)));
  CAIRN_API_END
}

cairn_status* cairn_checkpoint_reader_load_string_element(const cairn_checkpoint_reader* r, const char* key,
                                                          size_t index, char** out, size_t* size) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_reader_load_string_element";
  require(out, fn, "out");
  *out = nullptr;
  require(size, fn, "size");
  *size = 0;
  require(r, fn, "reader");
  require(key, fn, "key");
  const ckpt::WeightsEntry& e = entry_named(r, key, /*string=*/true, fn);
  std::vector<std::string> elements = r->file->load_strings(e);
  if (index >= elements.size())
    raise(Code::InvalidArgument, "{}: index {} is past the {} elements of '{}'", fn, index, elements.size(), key);
  *out = capi::malloc_string(elements[index], fn);
  *size = elements[index].size();
  CAIRN_API_END
}

cairn_status* cairn_checkpoint_reader_load_string(const cairn_checkpoint_reader* r, const char* key, char** out,
                                                  size_t* size) {
  return cairn_checkpoint_reader_load_string_element(r, key, 0, out, size);
}

cairn_status* cairn_checkpoint_reader_verify(const cairn_checkpoint_reader* r, const char* key, cairn_bool* checked) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_checkpoint_reader_verify";
  if (checked) *checked = CAIRN_FALSE;
  require(r, fn, "reader");
  require(key, fn, "key");
  const bool had = r->file->verify(r->file->entry(key));
  if (checked) *checked = had ? CAIRN_TRUE : CAIRN_FALSE;
  CAIRN_API_END
}

size_t cairn_checkpoint_reader_metadata_count(const cairn_checkpoint_reader* r) { return r ? r->metadata.size() : 0; }

const char* cairn_checkpoint_reader_metadata_key(const cairn_checkpoint_reader* r, size_t i) {
  return r && i < r->metadata.size() ? r->metadata[i].first.c_str() : nullptr;
}

const char* cairn_checkpoint_reader_metadata_value(const cairn_checkpoint_reader* r, size_t i) {
  return r && i < r->metadata.size() ? r->metadata[i].second.c_str() : nullptr;
}

// ---- a module's weights by name ----

cairn_status* cairn_object_load_weights(cairn_object* obj, const char* path, const cairn_weights_options* opts,
                                        size_t* loaded) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_object_load_weights";
  if (loaded) *loaded = 0;
  require(obj, fn, "obj");
  require(path, fn, "path");
  const size_t n = ckpt::load_module_weights(*obj->obj, path, module_weights_options(opts, fn), fn);
  if (loaded) *loaded = n;
  CAIRN_API_END
}

cairn_status* cairn_object_save_weights(cairn_object* obj, const char* path, cairn_weights_format format,
                                        const cairn_weights_options* opts) {
  CAIRN_API_BEGIN
  const char* fn = "cairn_object_save_weights";
  require(obj, fn, "obj");
  require(path, fn, "path");
  const ckpt::WeightsFormat f = format_to_write(format, fn);
  ckpt::save_module_weights(*obj->obj, path, f, module_weights_options(opts, fn), fn);
  CAIRN_API_END
}

void cairn_checkpoint_reader_free(cairn_checkpoint_reader* r) { delete r; }

}  // extern "C"
