# Source this on the GPU machine, from the repository root, before any GPU command:
#   . bench/gpu_setup.sh && python3 -m pytest test/e2e ...
# It installs the wheels carried in .whl/ (xdsl and its two dependencies, lit, filecheck: the GPU
# machine has torch, triton and transformers but no network) into /tmp/site, makes `import mlc`
# resolve to this checkout, and checks that the GPU is visible.
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
ln -sfn "$PWD" /tmp/site/mlc
export PYTHONPATH=/tmp/site
export PATH=/tmp/site/bin:$PATH
unset TRITON_INTERPRET
python3 -c 'import mlc, xdsl, torch, triton; assert torch.cuda.is_available(); print("mlc", mlc.__file__, "torch", torch.__version__, "triton", triton.__version__, torch.cuda.get_device_name())'
