"""Fetching pages to pin from a local HTTP server: text and HTML, redirects, errors, caps, and refused addresses."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from nightwatch.adapters.pins.pages import MAX_DOWNLOAD, PageFetcher, html_to_text
from nightwatch.domain.errors import FetchError, InvalidInputError, NotFoundError
from tests.page_server import Page, PageServer

SECRET = "xoxb-1234567890-abcdefghijklmnop"


@pytest.fixture
def server() -> Iterator[PageServer]:
    with PageServer() as running:
        yield running


@pytest.fixture
def fetcher() -> PageFetcher:
    """Allowed to fetch from 127.0.0.1, as NIGHTWATCH_PIN_URL_HOSTS=127.0.0.1 would allow."""
    return PageFetcher(allowed_hosts={"127.0.0.1"}, timeout=2.0)


def test_a_text_page_is_fetched_as_it_is(server: PageServer, fetcher: PageFetcher) -> None:
    url = server.text("/runbook.md", "# Runbook\nRestart workers one by one.\n", "text/markdown")
    snapshot = fetcher.fetch(url)
    assert snapshot.source == url
    assert snapshot.text == "# Runbook\nRestart workers one by one."
    assert snapshot.stamp is None


def test_an_html_page_becomes_plain_text(server: PageServer, fetcher: PageFetcher) -> None:
    page = """<!doctype html><html><head><title>Threat model</title><style>p{color:red}</style>
    <script>alert('x')</script></head><body><h1>Threat model</h1><p>The admin API is
    <b>VPN-only</b> &amp; audited.</p><ul><li>Tokens expire</li><li>Keys rotate</li></ul></body></html>"""
    text = fetcher.fetch(server.text("/tm", page, "text/html; charset=utf-8")).text
    assert text == "Threat model\n\nThe admin API is VPN-only & audited.\n\n- Tokens expire\n\n- Keys rotate"
    assert "alert" not in text
    assert "color" not in text


def test_html_to_text_survives_a_page_without_a_closed_head() -> None:
    assert html_to_text("<html><head><title>T</title><body><p>Body text</p>") == "T\n\nBody text"


def test_a_redirect_is_followed_and_the_pin_keeps_the_address_asked_for(
    server: PageServer, fetcher: PageFetcher
) -> None:
    server.text("/new", "Moved here.")
    url = server.redirect("/old", "/new", 301)
    snapshot = fetcher.fetch(url)
    assert (snapshot.source, snapshot.text) == (url, "Moved here.")
    assert [path for path, _ in server.requests] == ["/old", "/new"]


def test_a_redirect_loop_ends_with_a_clear_error(server: PageServer, fetcher: PageFetcher) -> None:
    server.redirect("/a", "/b")
    server.redirect("/b", "/a")
    with pytest.raises(FetchError, match="redirected more than 3 times"):
        fetcher.fetch(server.url("/a"))


@pytest.mark.parametrize(
    ("page", "error", "says"),
    [
        (Page(b"gone", status=404), NotFoundError, "answered 404"),
        (Page(b"oops", status=500), FetchError, "answered 500"),
        (Page(b"\x89PNG", content_type="image/png"), InvalidInputError, "is image/png, not text"),
        (Page(b"x" * (MAX_DOWNLOAD + 10)), InvalidInputError, "larger than 2 MiB"),
        pytest.param(Page(b"slow", delay=3.0), FetchError, "timed out", marks=pytest.mark.slow),
    ],
)
def test_a_page_that_cannot_be_pinned_is_a_clear_error(
    server: PageServer, fetcher: PageFetcher, page: Page, error: type[Exception], says: str
) -> None:
    server.pages["/p"] = page
    with pytest.raises(error, match=says):
        fetcher.fetch(server.url("/p"))


def test_a_closed_port_is_a_fetch_error(fetcher: PageFetcher) -> None:
    with pytest.raises(FetchError, match="could not be fetched"):
        fetcher.fetch("http://127.0.0.1:9/")


def test_secrets_in_a_page_are_redacted(server: PageServer, fetcher: PageFetcher) -> None:
    text = fetcher.fetch(server.text("/env", f"token: {SECRET}")).text
    assert SECRET not in text
    assert "[redacted" in text


# --- server-side request forgery ------------------------------------------------------------------------------------


def test_a_private_address_is_refused_unless_its_host_is_allowed(server: PageServer) -> None:
    url = server.text("/internal", "internal wiki")
    with pytest.raises(InvalidInputError, match=r"127\.0\.0\.1, a private, loopback or reserved address"):
        PageFetcher().fetch(url)
    with pytest.raises(InvalidInputError, match="NIGHTWATCH_PIN_URL_HOSTS"):
        PageFetcher(allowed_hosts={"wiki.example.com"}).fetch(url)
    assert server.requests == [], "nothing was asked of the private address"
    assert PageFetcher(allowed_hosts={"127.0.0.1"}).fetch(url).text == "internal wiki"


@pytest.mark.parametrize(
    "addresses",
    [
        ["10.0.0.5"],
        ["169.254.169.254"],  # the cloud metadata service
        ["192.168.1.1"],
        ["100.64.0.1"],
        ["::1"],
        ["fe80::1"],
        ["::ffff:127.0.0.1"],
        ["0.0.0.0"],
        ["93.184.216.34", "10.0.0.5"],  # one private answer among public ones is enough
    ],
)
def test_a_name_resolving_to_a_private_address_is_refused(addresses: list[str]) -> None:
    fetcher = PageFetcher(resolver=lambda host, port: addresses)
    with pytest.raises(InvalidInputError, match="private, loopback or reserved"):
        fetcher.fetch("https://innocent.example.com/page")


def test_the_checked_address_is_the_one_connected_to_with_the_host_name_kept(server: PageServer) -> None:
    server.text("/page", "served")
    looked_up: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        looked_up.append(host)
        return ["127.0.0.1"]

    fetcher = PageFetcher(allowed_hosts={"wiki.internal"}, resolver=resolver)
    assert fetcher.fetch(f"http://wiki.internal:{server.port}/page").text == "served"
    assert looked_up == ["wiki.internal"], "resolved once"
    assert server.requests == [("/page", f"wiki.internal:{server.port}")]


def test_a_redirect_to_a_private_address_is_refused(server: PageServer) -> None:
    server.redirect("/hop", "http://169.254.169.254/latest/meta-data/")
    fetcher = PageFetcher(allowed_hosts={"127.0.0.1"})
    with pytest.raises(InvalidInputError, match=r"169\.254\.169\.254"):
        fetcher.fetch(server.url("/hop"))


def test_a_redirect_to_another_scheme_is_refused(server: PageServer, fetcher: PageFetcher) -> None:
    server.redirect("/hop", "file:///etc/passwd")
    with pytest.raises(InvalidInputError, match="Only http:// and https://"):
        fetcher.fetch(server.url("/hop"))


def test_a_fetch_has_an_overall_deadline_across_redirects(server: PageServer) -> None:
    server.text("/end", "finally")
    server.pages["/slow"] = Page(status=302, headers={"Location": "/end"}, delay=0.4)
    with pytest.raises(FetchError, match="took too long"):
        PageFetcher(allowed_hosts={"127.0.0.1"}, deadline=0.2).fetch(server.url("/slow"))
    assert [path for path, _ in server.requests] == ["/slow"], "no hop starts after the deadline"


@pytest.mark.parametrize(
    "page",
    [
        Page(b"the body", drip_headers=0.05),  # the headers alone take far longer than the deadline
        Page(b"x" * 200, drip_body=0.05),  # so does the body, a byte at a time
        Page(b"late", delay=5.0),  # and a server that says nothing, while the per-step timeout is longer
    ],
    ids=["dripping headers", "dripping body", "silent"],
)
def test_one_deadline_covers_connect_headers_and_body(server: PageServer, page: Page) -> None:
    server.pages["/drip"] = page
    fetcher = PageFetcher(allowed_hosts={"127.0.0.1"}, timeout=10.0, deadline=0.5)
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"took too long to fetch \(over 0\.5 s\)"):
        fetcher.fetch(server.url("/drip"))
    assert time.monotonic() - started < 0.5 + 0.5  # the promise is 2 s over at most; a watchdog keeps it far under


def test_a_page_that_drips_within_the_deadline_is_fetched_whole(server: PageServer) -> None:
    server.pages["/drip"] = Page(b"slow but whole", drip_headers=0.001, drip_body=0.001)
    assert PageFetcher(allowed_hosts={"127.0.0.1"}, deadline=5.0).fetch(server.url("/drip")).text == "slow but whole"


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("::ffff:127.0.0.1", False),  # IPv4-mapped
        ("::ffff:10.0.0.5", False),
        ("::ffff:93.184.216.34", True),
        ("::127.0.0.1", False),  # IPv4-compatible (deprecated, still routed by some stacks)
        ("::169.254.169.254", False),
        ("::1", False),
        ("::", False),
        ("64:ff9b::7f00:1", False),  # NAT64 of 127.0.0.1
        ("64:ff9b::a9fe:a9fe", False),  # NAT64 of the metadata service
        ("64:ff9b::c0a8:101", False),  # NAT64 of 192.168.1.1
        ("64:ff9b:1::a00:5", False),  # local-use NAT64 of 10.0.0.5
        ("64:ff9b::5db8:d822", True),  # NAT64 of a public address
        ("2002:7f00:1::", False),  # 6to4 of 127.0.0.1
        ("2002:a00:5::1", False),  # 6to4 of 10.0.0.5
        ("2002:c0a8:101::1", False),  # 6to4 of 192.168.1.1
        ("2002:5db8:d822::1", True),  # 6to4 of a public address
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", False),  # Teredo, client 127.0.0.1
        ("2001:0:4136:e378:8000:63bf:f5ff:fffa", False),  # Teredo, client 10.0.0.5
        ("2001:0:4136:e378:8000:63bf:a247:27dd", True),  # Teredo, client 93.184.216.34
        ("fe80::1", False),
        ("fc00::1", False),
        ("ff02::1", False),
        ("2606:4700:4700::1111", True),  # an ordinary public IPv6 address
        ("93.184.216.34", True),
        ("240.0.0.1", False),  # reserved IPv4
    ],
)
def test_every_ipv6_form_of_a_private_ipv4_address_is_refused(address: str, public: bool) -> None:
    fetcher = PageFetcher(resolver=lambda host, port: [address], timeout=0.2, deadline=0.5)
    if public:  # allowed by the guard; no server is there, so the fetch fails after the check
        with pytest.raises(FetchError):
            fetcher.fetch("https://innocent.example.com/page")
    else:
        with pytest.raises(InvalidInputError, match="private, loopback or reserved"):
            fetcher.fetch("https://innocent.example.com/page")


@pytest.mark.parametrize("url", ["http://[::127.0.0.1]/", "http://[64:ff9b::7f00:1]/", "http://[::ffff:7f00:1]/"])
def test_an_ipv6_literal_that_carries_a_loopback_address_is_refused(url: str) -> None:
    with pytest.raises(InvalidInputError, match="private, loopback or reserved"):
        PageFetcher().fetch(url)
