//! cairn::mpi, MirroredStrategy::multi_worker and CheckpointManager::shard in one process without
//! mpirun: bad input, a missing plugin (UNAVAILABLE naming where it looked), then, when
//! CAIRN_MPI_PLUGIN names the plugin, a world of one process. Several ranks run under mpirun in
//! tests/mpi/run.sh (the example multi_worker).
//!
//! One test: the plugin's path is read from the environment, a successful load is kept for the
//! process, and MPI cannot start again once finalized.

use std::time::Duration;

use cairn::distribute::MirroredStrategy;
use cairn::mpi::{Mpi, MultiWorkerOptions};
use cairn::{Checkpoint, CheckpointManager, Code, Context, ContextOptions, Reduction, Tensor, Variable};

#[test]
fn mpi_in_one_process() {
    let ctx = Context::with_options(ContextOptions::new().seed(1)).unwrap();
    let err = Mpi::init(&ctx, Duration::ZERO).unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("Mpi::init: the timeout 0ns is below 1 ms"), "{err}");

    let plugin = std::env::var_os("CAIRN_MPI_PLUGIN");
    let dir = temp_dir("missing");
    let missing = dir.join("libcairn_mpi.so");
    std::env::set_var("CAIRN_MPI_PLUGIN", &missing);
    let err = Mpi::init(&ctx, Duration::from_secs(1)).unwrap_err();
    assert_eq!(err.code(), Code::Unavailable);
    assert!(err.message().contains(&format!("{} (", missing.display())), "{err}");

    let Some(plugin) = plugin.filter(|p| !p.is_empty()) else {
        eprintln!("skipped a world of one: CAIRN_MPI_PLUGIN does not name libcairn_mpi.so (tests/mpi/run.sh sets it)");
        return;
    };
    std::env::set_var("CAIRN_MPI_PLUGIN", plugin);
    let mpi = Mpi::init(&ctx, Duration::from_secs(10)).unwrap();
    assert_eq!((mpi.rank(), mpi.size()), (0, 1), "{mpi:?}");
    world_of_one(&ctx, &mpi);
}

/// Each collective, the strategy and a sharded save on a communicator of one.
fn world_of_one(ctx: &Context, mpi: &Mpi) {
    let value = Tensor::new(ctx, &[1.5f32, -2.0], &[2]).unwrap();
    for out in [mpi.all_reduce(Reduction::Max, &value), mpi.broadcast(0, &value), mpi.all_gather(&value)] {
        assert_eq!(out.unwrap().to_vec::<f32>().unwrap(), [1.5, -2.0]);
    }
    mpi.barrier().unwrap();
    assert_eq!(mpi.broadcast(1, &value).unwrap_err().code(), Code::InvalidArgument);
    let err = mpi.broadcast(usize::MAX, &value).unwrap_err();
    assert!(err.message().contains("Mpi::broadcast: root"), "{err}");

    let strategy = MirroredStrategy::multi_worker(ctx, mpi, &MultiWorkerOptions::new().check_replicas(true)).unwrap();
    assert_eq!(strategy.num_replicas(), 1);

    let dir = temp_dir("sharded");
    let v = Variable::new(ctx, &Tensor::new(ctx, &[1.0f32, 2.0, 3.0], &[3]).unwrap()).unwrap();
    let manager =
        CheckpointManager::new(Checkpoint::new(ctx, &[("v", &v)]).unwrap(), &dir, Default::default()).unwrap();
    manager.shard(Some(mpi)).unwrap();
    let path = manager.save().unwrap();
    let shards = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("ckpt-1.shard-0-of-1-"))
        .count();
    assert_eq!(shards, 1, "the shard file beside {}", path.display());
    manager.shard(None).unwrap();

    let restored = Variable::new(ctx, &Tensor::new(ctx, &[0.0f32; 3], &[3]).unwrap()).unwrap();
    Checkpoint::new(ctx, &[("v", &restored)]).unwrap().restore(&path).unwrap();
    assert_eq!(restored.read().unwrap().to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0]);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A fresh directory under the system's temporary directory.
fn temp_dir(what: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cairn-mpi-test-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
