"""One validation of routing input: route, route_batch, the Python API and the LiteLLM strategy refuse the same
lambdas and queries with the same message."""

import math

import pytest
from support.handbooks import routing_models

from skillorchestra_core.routing.api import HandbookRouter
from skillorchestra_core.routing.batch import route_batch
from skillorchestra_core.routing.engine import RouteOptions, route
from skillorchestra_core.routing.inputs import RoutingInputError
from skillorchestra_core.routing.litellm_integration import HandbookRoutingStrategy

BAD_LAMBDAS = [-0.1, math.nan, math.inf, -math.inf, "0.1", True]
BAD_QUERIES = ["", "   ", "\n\t"]


@pytest.fixture
def router(db_url):
    routing_models(db_url)
    return HandbookRouter.from_database("mini-qa", db_url=db_url)


@pytest.mark.parametrize("lam", BAD_LAMBDAS)
def test_every_entry_point_refuses_a_bad_lambda(router, lam):
    message = "lambda must be a finite number >= 0"
    with pytest.raises(RoutingInputError, match=message):
        route_batch(router.model, ["a question"], lam=lam)
    with pytest.raises(RoutingInputError, match=message):
        route(router.model, "a question", RouteOptions(lam=lam))
    with pytest.raises(RoutingInputError, match=message):
        router.route("a question", lam=lam)
    with pytest.raises(RoutingInputError, match=message):
        router.route_batch(["a question"], lam=lam)
    with pytest.raises(RoutingInputError, match=message):
        HandbookRoutingStrategy(router, lam=lam)


@pytest.mark.parametrize("query", BAD_QUERIES)
def test_every_entry_point_refuses_a_blank_query(router, query):
    message = "the query is blank"
    with pytest.raises(RoutingInputError, match=message):
        route_batch(router.model, ["fine", query], lam=0.1)
    with pytest.raises(RoutingInputError, match=message):
        route(router.model, query)
    with pytest.raises(RoutingInputError, match=message):
        router.route(query)
    with pytest.raises(RoutingInputError, match=r"the query is blank \(query 2\)"):
        router.route_batch(["fine", query])
    with pytest.raises(RoutingInputError, match=message):
        HandbookRoutingStrategy(router).pick("pool", messages=[{"role": "user", "content": query}])


def test_good_input_routes(router):
    assert router.route_batch(["a question", "another"], lam=0).agents == [router.choose("a question", lam=0),
                                                                            router.choose("another", lam=0)]
