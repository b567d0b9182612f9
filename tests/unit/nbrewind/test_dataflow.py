"""Data-flow analysis of cell sources: reads before writes, scopes, magics, workflows."""

from nbrewind import analyse_cell, reads_closure, source_hash


def test_read_before_write_in_the_same_cell_is_a_read():
    a = analyse_cell("x = x + 1\ny = x * 2\nz = y")
    assert a.reads == {"x"}
    assert a.writes == {"x", "y", "z"}


def test_augmented_assignment_reads_its_target():
    a = analyse_cell("total += 1")
    assert a.reads == {"total"} and a.writes == {"total"}


def test_in_place_calls_and_item_stores_read_the_base_name():
    """An AST cannot tell mutation from reading; the base name is at least a read (the kernel
    checks at run time whether it changed)."""
    a = analyse_cell("df.drop(columns=['a'], inplace=True)\nlst.append(3)\nd['k'] = 1\no.f = 2")
    assert {"df", "lst", "d", "o"} <= a.reads
    assert a.writes == set()


def test_function_bodies_are_read_at_call_time_not_definition():
    a = analyse_cell("def f(x):\n    y = x + scale\n    return helper(y)\n")
    assert a.reads == set()
    assert a.writes == {"f"}
    assert a.functions["f"] == {"scale", "helper"}


def test_a_function_called_in_its_own_cell_reads_its_globals_there():
    a = analyse_cell("def f():\n    return scale\nv = f()")
    assert "scale" in a.reads


def test_reads_closure_follows_functions_defined_in_earlier_cells():
    functions = {"fit": frozenset({"prepare", "alpha"}), "prepare": frozenset({"data"})}
    assert reads_closure(frozenset({"fit"}), functions) == {"fit", "prepare", "alpha", "data"}


def test_comprehension_and_lambda_variables_are_local():
    a = analyse_cell("ys = [i * k for i in xs]\nf = lambda q: q + off")
    assert a.reads == {"k", "xs", "off"}
    assert a.writes == {"ys", "f"}


def test_decorators_defaults_and_bases_are_read_at_definition():
    a = analyse_cell("@deco\ndef f(x=default):\n    pass\nclass C(Base):\n    k = w\n")
    assert {"deco", "default", "Base"} <= a.reads
    assert a.functions["C"] == {"w"}


def test_imports_bind_their_top_level_name():
    a = analyse_cell("import os.path\nimport numpy as np\nfrom a.b import c as d, e")
    assert a.writes == {"os", "np", "d", "e"}


def test_del_is_a_write_and_a_deletion():
    a = analyse_cell("del tmp")
    assert a.deleted == {"tmp"} and "tmp" in a.writes


def test_magics_and_exec_make_a_cell_opaque_but_shell_escapes_do_not():
    assert analyse_cell("%time y = x").opaque
    assert analyse_cell("exec('y = 1')").opaque
    assert analyse_cell("from m import *").opaque
    shell = analyse_cell("!ls -l")
    assert not shell.opaque and not shell.workflow


def test_shell_escapes_read_the_names_they_expand():
    a = analyse_cell("!{sys.executable} -m snakemake --sticky-checkpoints {store} -j $cores")
    assert {"sys", "store", "cores"} <= a.reads


def test_snakemake_cells_are_workflow_cells():
    assert analyse_cell("!snakemake -j1 --executor sticky").workflow
    assert analyse_cell("from snakemake.api import SnakemakeApi").workflow
    assert analyse_cell("subprocess.run(['snakemake', '-j1'])").workflow
    assert not analyse_cell("x = 'not a workflow'").workflow


def test_string_constants_are_file_path_candidates():
    a = analyse_cell("df = read('results/table.csv')")
    assert "results/table.csv" in a.strings


def test_syntax_errors_are_opaque_not_exceptions():
    a = analyse_cell("def (:")
    assert a.syntax_error and a.opaque


def test_source_hash_ignores_trailing_whitespace_only():
    assert source_hash("x = 1  \n\n") == source_hash("x = 1")
    assert source_hash("x = 1") != source_hash("x = 2")
