"""Per-run figures: the tegrastats line of a Jetson AGX Orin, and /proc/meminfo."""

from __future__ import annotations

from routine.host.sysmetrics import parse_tegrastats, system_memory

# The shape of an AGX Orin 64GB line (JetPack 6); values made up.
ORIN = ("11-22-2026 07:30:05 RAM 21450/62841MB (lfb 120x4MB) SWAP 12/31420MB (cached 0MB) "
        "CPU [12%@1728,3%@1728,0%@1728,5%@1728,off,off,off,off,0%@729,0%@729,0%@729,0%@729] EMC_FREQ 41%@3199 "
        "GR3D_FREQ 97%@[1300,1300] VIC_FREQ 729 APE 174 CV0@-256C CPU@55.1C Tboard@38C SOC2@51.2C Tdiode@40.5C "
        "SOC0@52C CV1@-256C GPU@58.25C tj@58.25C SOC1@51.5C CV2@-256C VDD_GPU_SOC 14210mW/9120mW "
        "VDD_CPU_CV 2390mW/2100mW VIN_SYS_5V0 5120mW/5010mW NC 0mW/0mW VDDQ_VDD2_1V8AO 905mW/880mW")
# An older Jetson (Xavier NX, JetPack 5): one GPU frequency, other rails.
XAVIER = ("RAM 3168/6851MB (lfb 2x4MB) SWAP 161/3426MB (cached 0MB) CPU [23%@1397,17%@1192] EMC_FREQ 2%@204 "
          "GR3D_FREQ 0%@[114] VIC_FREQ 115 APE 150 AUX@45C CPU@46.5C GPU@45.5C VDD_IN 2763mW/2846mW")


def test_tegrastats_orin_line():
    got = parse_tegrastats(ORIN)
    assert got["ram_used_mb"] == 21450 and got["ram_total_mb"] == 62841
    assert got["swap_used_mb"] == 12 and got["swap_total_mb"] == 31420
    assert got["gpu_load_pct"] == 97 and got["gpu_freq_mhz"] == 1300 and got["emc_load_pct"] == 41
    assert got["temp_c"]["gpu"] == 58.25 and got["temp_c"]["tj"] == 58.25
    assert "cv0" not in got["temp_c"]  # -256C: no sensor
    assert got["power_mw"]["VDD_GPU_SOC"] == 14210 and "NC" not in got["power_mw"]


def test_tegrastats_xavier_line_and_garbage():
    got = parse_tegrastats(XAVIER)
    assert got["gpu_load_pct"] == 0 and got["gpu_freq_mhz"] == 114 and got["power_mw"] == {"VDD_IN": 2763}
    assert parse_tegrastats("tegrastats: permission denied") == {}


def test_system_memory_from_meminfo():
    meminfo = ("MemTotal:       64348160 kB\nMemFree:  1000 kB\nMemAvailable:   41943040 kB\n"
               "SwapTotal: 2097152 kB\nSwapFree: 1048576 kB\n")
    assert system_memory(meminfo) == {"mem_total_mb": 62840, "mem_available_mb": 40960, "swap_used_mb": 1024}
