//! Accelerators' peak figures: HBM bandwidth and dense (no sparsity) tensor
//! FLOPs, as their vendors publish them. Data only.
//!
//! Sources, one per row (dense figures are half the "with sparsity" ones the
//! datasheets print first):
//! - H100 SXM, H100 PCIe, H100 NVL: NVIDIA H100 datasheet, <https://www.nvidia.com/en-us/data-center/h100/>
//! - H200 SXM: NVIDIA H200 datasheet, <https://www.nvidia.com/en-us/data-center/h200/>
//! - H20: NVIDIA HGX H20 product brief (4.0 TB/s, 148 TFLOPS BF16, 296 FP8)
//! - B200: NVIDIA HGX B200 datasheet, <https://www.nvidia.com/en-us/data-center/hgx/> (per GPU: 8 TB/s, 4.5 PFLOPS FP8 sparse)
//! - A100 40 GB / 80 GB SXM: NVIDIA A100 datasheet, <https://www.nvidia.com/en-us/data-center/a100/>
//! - L40S: NVIDIA L40S datasheet, <https://www.nvidia.com/en-us/data-center/l40s/>
//! - L4: NVIDIA L4 datasheet, <https://www.nvidia.com/en-us/data-center/l4/>
//! - A10G: AWS's variant of the A10; NVIDIA publishes no datasheet for it, so the
//!   A10 datasheet's figures are used, <https://www.nvidia.com/en-us/data-center/products/a10-gpu/>
//! - RTX 4090: NVIDIA Ada Lovelace architecture whitepaper, appendix A (BF16/FP8
//!   with FP32 accumulate, which inference kernels use: GeForce halves it)
//! - RTX 5090: NVIDIA RTX Blackwell GPU architecture whitepaper, appendix (FP32 accumulate)
//! - MI300X: AMD Instinct MI300X datasheet, <https://www.amd.com/en/products/accelerators/instinct/mi300/mi300x.html>
//! - MI325X: AMD Instinct MI325X datasheet, <https://www.amd.com/en/products/accelerators/instinct/mi300/mi325x.html>
//! - Ascend 910B: Huawei Atlas 800T A2 specifications (HBM2e 1.6 TB/s; FP16 about
//!   320 TFLOPS, varying by bin 910B1–B4; no FP8)

/// One accelerator's peaks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gpu {
    /// The name shown (`H200 SXM`).
    pub name: &'static str,
    /// Names it is asked for by, lower case, without spaces or dashes.
    pub aliases: &'static [&'static str],
    /// Peak HBM (device memory) bandwidth, GB/s (10^9 bytes).
    pub hbm_gb_s: f64,
    /// Dense BF16 (FP16 on Ascend) tensor TFLOPS.
    pub bf16_tflops: f64,
    /// Dense FP8 tensor TFLOPS, where the chip has FP8.
    pub fp8_tflops: Option<f64>,
    /// Memory per device, GB.
    pub memory_gb: f64,
}

#[rustfmt::skip]
pub const GPUS: &[Gpu] = &[
    Gpu { name: "H100 SXM", aliases: &["h100", "h100sxm", "h10080gb", "h100sxm5"], hbm_gb_s: 3350.0, bf16_tflops: 989.4, fp8_tflops: Some(1978.9), memory_gb: 80.0 },
    Gpu { name: "H100 PCIe", aliases: &["h100pcie"], hbm_gb_s: 2000.0, bf16_tflops: 756.0, fp8_tflops: Some(1513.0), memory_gb: 80.0 },
    Gpu { name: "H100 NVL", aliases: &["h100nvl"], hbm_gb_s: 3900.0, bf16_tflops: 835.5, fp8_tflops: Some(1670.5), memory_gb: 94.0 },
    Gpu { name: "H200 SXM", aliases: &["h200", "h200sxm", "h200141gb"], hbm_gb_s: 4800.0, bf16_tflops: 989.4, fp8_tflops: Some(1978.9), memory_gb: 141.0 },
    Gpu { name: "H20", aliases: &["h20", "h2096gb"], hbm_gb_s: 4000.0, bf16_tflops: 148.0, fp8_tflops: Some(296.0), memory_gb: 96.0 },
    Gpu { name: "B200", aliases: &["b200", "b200sxm"], hbm_gb_s: 8000.0, bf16_tflops: 2250.0, fp8_tflops: Some(4500.0), memory_gb: 180.0 },
    Gpu { name: "A100 40 GB", aliases: &["a10040gb", "a10040g", "a100sxm440gb", "a10040"], hbm_gb_s: 1555.0, bf16_tflops: 312.0, fp8_tflops: None, memory_gb: 40.0 },
    Gpu { name: "A100 80 GB", aliases: &["a100", "a10080gb", "a10080g", "a100sxm480gb", "a10080"], hbm_gb_s: 2039.0, bf16_tflops: 312.0, fp8_tflops: None, memory_gb: 80.0 },
    Gpu { name: "L40S", aliases: &["l40s"], hbm_gb_s: 864.0, bf16_tflops: 362.05, fp8_tflops: Some(733.0), memory_gb: 48.0 },
    Gpu { name: "L4", aliases: &["l4"], hbm_gb_s: 300.0, bf16_tflops: 121.0, fp8_tflops: Some(242.5), memory_gb: 24.0 },
    Gpu { name: "A10G", aliases: &["a10g", "a10"], hbm_gb_s: 600.0, bf16_tflops: 125.0, fp8_tflops: None, memory_gb: 24.0 },
    Gpu { name: "RTX 4090", aliases: &["rtx4090", "4090", "geforcertx4090"], hbm_gb_s: 1008.0, bf16_tflops: 82.6, fp8_tflops: Some(165.2), memory_gb: 24.0 },
    Gpu { name: "RTX 5090", aliases: &["rtx5090", "5090", "geforcertx5090"], hbm_gb_s: 1792.0, bf16_tflops: 209.5, fp8_tflops: Some(419.0), memory_gb: 32.0 },
    Gpu { name: "MI300X", aliases: &["mi300x", "mi300"], hbm_gb_s: 5300.0, bf16_tflops: 1307.4, fp8_tflops: Some(2614.9), memory_gb: 192.0 },
    Gpu { name: "MI325X", aliases: &["mi325x", "mi325"], hbm_gb_s: 6000.0, bf16_tflops: 1307.4, fp8_tflops: Some(2614.9), memory_gb: 256.0 },
    Gpu { name: "Ascend 910B", aliases: &["ascend910b", "910b", "ascend910b2", "ascend910b3"], hbm_gb_s: 1600.0, bf16_tflops: 320.0, fp8_tflops: None, memory_gb: 64.0 },
];

/// Lower case, letters and digits only: `H100-SXM` and `h100 sxm` are one name.
pub fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The accelerator a name asks for (`h200`, `H100 PCIe`, `mi300x`).
pub fn gpu(name: &str) -> Option<&'static Gpu> {
    let k = squash(name);
    let k = k.strip_prefix("nvidia").unwrap_or(&k);
    let k = k.strip_prefix("amd").unwrap_or(k);
    let k = k.strip_prefix("instinct").unwrap_or(k);
    GPUS.iter()
        .find(|g| squash(g.name) == k || g.aliases.contains(&k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_find_their_gpu_in_any_spelling() {
        assert_eq!(gpu("H200").unwrap().hbm_gb_s, 4800.0);
        assert_eq!(gpu("h100-pcie").unwrap().name, "H100 PCIe");
        assert_eq!(gpu("NVIDIA H100 SXM").unwrap().name, "H100 SXM");
        assert_eq!(gpu("A100 40GB").unwrap().hbm_gb_s, 1555.0);
        assert_eq!(gpu("AMD Instinct MI300X").unwrap().name, "MI300X");
        assert!(gpu("tpu v5e").is_none());
        for g in GPUS {
            assert_eq!(gpu(g.name), Some(g), "{}", g.name);
            assert!(g.fp8_tflops.is_none_or(|f| f > g.bf16_tflops));
        }
    }
}
