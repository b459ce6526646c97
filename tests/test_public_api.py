import donegate


def test_all_names_resolve() -> None:
    for name in donegate.__all__:
        assert getattr(donegate, name) is not None


def test_all_and_lazy_exports_agree() -> None:
    assert set(donegate.__all__) == {"__version__", *donegate._EXPORTS}
