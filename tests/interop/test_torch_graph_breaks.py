"""torch.compile on functions that call the bridge's sparse-facing operations: each call is a graph
break (docs/torch.md), so ``fullgraph=False`` compiles the code around it and gives torch's eager
answer, gradients included; ``fullgraph=True`` refuses it."""
import pytest

torch = pytest.importorskip("torch")
ct = pytest.importorskip("coosparse.interop.torch")


def _sparse():
    i = torch.tensor([[0, 1, 1, 0], [2, 0, 2, 2]])
    v = torch.tensor([3.0, 4.0, 5.0, -1.0], dtype=torch.float64)
    return torch.sparse_coo_tensor(i, v, (2, 3))


CASES = {
    "matmul": lambda A, x, y: (ct.matmul(A, y) * 2).relu().sum(),
    "to_dense": lambda A, x, y: (ct.to_dense(A) + x).pow(2).sum(),
    "sparse_mask": lambda A, x, y: ct.to_dense(ct.sparse_mask(x * 3, A)).sum(),
    "coalesce": lambda A, x, y: ct.to_dense(ct.coalesce(A)).exp().sum(),
    "multiply+add": lambda A, x, y: ct.to_dense(ct.add(ct.multiply(A, A), A)).sum() + x.sum(),
    "mask_projection": lambda A, x, y: ct.to_dense(ct.mask_projection(A, ct.coalesce(A))).sum(),
    "sampled_matmul": lambda A, x, y: ct.to_dense(ct.sampled_matmul(A, x @ y, y.T)).sum(),
    "from_torch/to_torch": lambda A, x, y: ct.to_dense(ct.to_torch(ct.from_torch(A.coalesce()) * 2)).sum(),
}


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_sparse_ops_graph_break(name, backend):
    torch._dynamo.reset()
    f = CASES[name]
    x = torch.randn(2, 3, dtype=torch.float64)
    y = torch.randn(3, 4, dtype=torch.float64)
    want = f(_sparse(), x, y)
    got = torch.compile(f, fullgraph=False, backend=backend)(_sparse(), x, y)
    torch.testing.assert_close(got, want)


def test_gradients_flow_through_the_break():
    torch._dynamo.reset()
    x = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    y = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)

    def f(A, x, y):
        return (ct.matmul(ct.sparse_mask(x, A), y).tanh() * x.sum()).sum()

    A = _sparse().coalesce()
    want = torch.autograd.grad(f(A, x, y), (x, y))
    got = torch.autograd.grad(torch.compile(f, backend="aot_eager")(A, x, y), (x, y))
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)


def test_fullgraph_refuses_the_break():
    torch._dynamo.reset()
    with pytest.raises(Exception, match="(?i)skip|disable|graph break"):
        torch.compile(CASES["to_dense"], fullgraph=True, backend="eager")(_sparse(), torch.ones(2, 3), None)


def test_plain_calls_do_not_need_dynamo():
    import subprocess
    import sys

    code = ("import sys, torch, coosparse.interop.torch as ct; "
            "i = torch.tensor([[0, 1]]); t = torch.sparse_coo_tensor(i, torch.ones(2), (3,)); "
            "print(ct.to_dense(t).tolist(), 'torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[1.0,", "1.0,", "0.0]", "False"]
