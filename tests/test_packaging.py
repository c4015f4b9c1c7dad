"""The wheel builds, installs and works: every package of pyproject's list, the CUDA sources and the
emulated device's data travel with it (the package list is maintained by hand)."""
import glob
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_wheel_installs_and_passes_the_smoke_test(tmp_path):
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "-q"]
    subprocess.run(pip + ["wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), REPO], check=True,
                   cwd=tmp_path)
    (wheel,) = glob.glob(str(wheels / "*.whl"))
    subprocess.run(pip + ["install", "--no-deps", "--target", str(site), wheel], check=True, cwd=tmp_path)
    env = dict(os.environ, PYTHONPATH=str(site))
    probe = ("import coosparse, os; from coosparse._kernels.cuda import sources; from coosparse.testing import device; "
             "print(coosparse.__file__); print(','.join(sorted(f for f in os.listdir(sources.KERNEL_DIR) if f.endswith('.cu')))); "
             "print(device.surface() is not None)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=tmp_path,
                         env=env).stdout.split()
    assert out[0].startswith(str(site)), out  # the installed copy, not the checkout
    shipped = sorted(os.path.basename(f) for f in glob.glob(os.path.join(REPO, "cuda_kernels", "*.cu")))
    assert out[1] == ",".join(shipped) and out[2] == "True"
    smoke = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            os.path.join(REPO, "tests", "test_smoke.py")], capture_output=True, text=True,
                           cwd=tmp_path, env=env)
    assert smoke.returncode == 0, smoke.stdout[-3000:] + smoke.stderr[-3000:]
