//! OpenBLAS moved onto the best core for this CPU still computes the same vectors. Its own
//! test binary (one process): moving the core sets an environment variable.
#![cfg(feature = "openblas")]

use mempalace_embed_candle::openblas_core::{
    CoreSelection, best_core_for_this_cpu, running_core, runs_below_this_cpu, select_best_core,
};
use mempalace_embed_candle::{MatmulKernel, MiniLmEmbedder, WeightPrecision};

#[test]
fn openblas_runs_this_cpus_best_core_and_embeds_as_the_pure_rust_kernel_does() {
    let before = running_core();
    // SAFETY: the only test of this binary; nothing else reads the environment meanwhile.
    let selection = unsafe { select_best_core() };
    match &selection {
        CoreSelection::Moved { from, to } => {
            assert_eq!(&before, from);
            assert_ne!(from, to, "OpenBLAS did not move");
            assert_eq!(Some(to.as_str()), best_core_for_this_cpu());
        }
        CoreSelection::AlreadyBest(core) | CoreSelection::Fixed(core) => {
            assert_eq!(&before, core)
        }
        CoreSelection::SetByEnvironment(_) => {}
    }
    if !matches!(
        selection,
        CoreSelection::Fixed(_) | CoreSelection::SetByEnvironment(_)
    ) {
        assert!(
            !runs_below_this_cpu(),
            "OpenBLAS runs {} on a CPU for {:?}",
            running_core(),
            best_core_for_this_cpu()
        );
        assert_eq!(MatmulKernel::fastest(), MatmulKernel::OpenBlas);
    }
    let model = MiniLmEmbedder::load_resolved(None)
        .expect("run scripts/fetch-model.sh first")
        .with_weight_precision(WeightPrecision::Single);
    // Long enough for the products to go to BLAS (more than the few-rows kernel's 56 rows).
    let texts: Vec<String> = (0..6)
        .map(|i| {
            format!(
                "Paragraph {i}: the billing service moved its webhook handlers to a queue so \
                 retries no longer block checkout; the team measured latency before and after, \
                 wrote the decision down, and scheduled a review of the pricing migration for \
                 the next release, with notes on authentication and the weekly database backups."
            )
        })
        .collect();
    let blas = model
        .clone()
        .with_matmul_kernel(MatmulKernel::OpenBlas)
        .embed_blocking(&texts)
        .unwrap();
    let pure = model
        .with_matmul_kernel(MatmulKernel::PureRust)
        .embed_blocking(&texts)
        .unwrap();
    for (b, p) in blas.iter().zip(&pure) {
        let cosine: f32 = b.iter().zip(p).map(|(x, y)| x * y).sum();
        assert!(cosine > 0.99999, "cosine {cosine}");
    }
}
