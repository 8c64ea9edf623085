from rest_framework.pagination import CursorPagination


class NewestFirst(CursorPagination):
    """Cursor pagination, newest first: a page stays stable while rows are added at the top."""

    ordering = "-created_at"
    page_size_query_param = "page_size"
    max_page_size = 500


class NewestReceivedFirst(CursorPagination):
    ordering = "-received_at"
    page_size_query_param = "page_size"
    max_page_size = 500


class BySlug(CursorPagination):
    ordering = "slug"
    page_size_query_param = "page_size"
    max_page_size = 500
