"""A wide MCP server: 57 tools shaped like what seven common servers list together (GitHub,
filesystem, PostgreSQL, Slack, Jira, a browser, a calendar), ~33 KB of JSON Schema in all — the
size issue 29 measured. Written with the same SDK the client uses; every call echoes its
arguments.

    python tests/mcp/wide_server.py        # serve over stdin/stdout
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from mcp_types import Tool as MCPTool

# What each parameter is, as such servers describe theirs.
PARAMS: dict[str, tuple[Any, str]] = {
    "owner": ("string", "The account owner of the repository (a user or an organization name); "
                        "not case sensitive."),
    "repo": ("string", "The name of the repository without the .git extension; not case "
                       "sensitive."),
    "issue_number": ("integer", "The number that identifies the issue in its repository."),
    "pull_number": ("integer", "The number that identifies the pull request."),
    "title": ("string", "The title, one line; shown in lists and notifications."),
    "body": ("string", "The text, in GitHub-flavoured Markdown; mentions and references work."),
    "labels": ({"type": "array", "items": {"type": "string"}},
               "Labels to set, by name; labels that do not exist are created."),
    "assignees": ({"type": "array", "items": {"type": "string"}},
                  "Logins of the people to assign; at most ten."),
    "state": ({"type": "string", "enum": ["open", "closed", "all"]},
              "Which ones by state: open, closed or all of them."),
    "page": ("integer", "The page of results to return, counting from 1."),
    "per_page": ("integer", "Results per page (at most 100)."),
    "path": ("string", "The path of the file or folder, relative to the root it is under."),
    "paths": ({"type": "array", "items": {"type": "string"}},
              "The paths to read, each relative to an allowed directory."),
    "content": ("string", "The complete new content of the file, as text."),
    "branch": ("string", "The branch name; defaults to the repository's default branch."),
    "sha": ("string", "The blob SHA of the file being replaced, required when updating."),
    "message": ("string", "The commit message, first line short."),
    "query": ("string", "The search query, in the service's own search syntax."),
    "sort": ({"type": "string", "enum": ["created", "updated", "comments"]},
             "What to sort results by."),
    "order": ({"type": "string", "enum": ["asc", "desc"]}, "The sort order."),
    "head": ("string", "The branch where your changes are implemented."),
    "base": ("string", "The branch you want the changes pulled into."),
    "draft": ("boolean", "Whether to open it as a draft."),
    "merge_method": ({"type": "string", "enum": ["merge", "squash", "rebase"]},
                     "How to merge the pull request."),
    "from_branch": ("string", "The branch to start the new branch from."),
    "edits": ({"type": "array", "items": {"type": "object", "properties": {
        "oldText": {"type": "string"}, "newText": {"type": "string"}},
        "required": ["oldText", "newText"]}},
        "Edits to make, each an exact text to find and the text to put instead."),
    "dry_run": ("boolean", "Preview the changes as a diff without writing them."),
    "source": ("string", "The path to move from."),
    "destination": ("string", "The path to move to; must not exist yet."),
    "pattern": ("string", "A glob pattern the names must match, such as *.py."),
    "exclude_patterns": ({"type": "array", "items": {"type": "string"}},
                         "Glob patterns of paths to leave out."),
    "sql": ("string", "One read-only SQL statement to run against the database."),
    "schema": ("string", "The schema name; public when not given."),
    "table": ("string", "The table name, without its schema."),
    "channel_id": ("string", "The ID of the channel (not its name), such as C024BE91L."),
    "text": ("string", "The text of the message, in Slack's mrkdwn."),
    "thread_ts": ("string", "The timestamp of the parent message, in the form 1234567890.123456."),
    "reaction": ("string", "The name of the emoji, without colons."),
    "limit": ("integer", "The most items to return (default 100, at most 1000)."),
    "cursor": ("string", "The pagination cursor from the previous response's next_cursor."),
    "user_id": ("string", "The ID of the user, such as U0G9QF9C6."),
    "project_key": ("string", "The key of the project, such as PROJ."),
    "issue_key": ("string", "The key of the ticket, such as PROJ-123."),
    "summary": ("string", "The summary line of the ticket."),
    "description": ("string", "The description, in Jira wiki markup."),
    "issue_type": ({"type": "string", "enum": ["Task", "Bug", "Story", "Epic"]},
                   "The type of the ticket."),
    "priority": ({"type": "string", "enum": ["Highest", "High", "Medium", "Low", "Lowest"]},
                 "The priority of the ticket."),
    "jql": ("string", "A JQL query, such as project = PROJ AND status = 'In Progress'."),
    "transition": ("string", "The name of the transition, such as Done or In Review."),
    "comment": ("string", "The text of the comment."),
    "assignee": ("string", "The account ID of the person to assign."),
    "url": ("string", "The URL to navigate to, with its scheme."),
    "selector": ("string", "A CSS selector or an accessibility reference of the element."),
    "element": ("string", "What the element is, in words, for the person approving the action."),
    "value": ("string", "The text to type into the element."),
    "submit": ("boolean", "Whether to press Enter afterwards."),
    "full_page": ("boolean", "Whether to capture the whole scrollable page."),
    "script": ("string", "A JavaScript function body to evaluate in the page."),
    "fields": ({"type": "array", "items": {"type": "object", "properties": {
        "selector": {"type": "string"}, "value": {"type": "string"}}}},
        "The fields to fill, each a selector and a value."),
    "seconds": ("number", "How long to wait, in seconds."),
    "calendar_id": ("string", "The calendar's ID; primary for the person's own calendar."),
    "event_id": ("string", "The ID of the event."),
    "start": ("string", "The start, an RFC 3339 date-time with an offset."),
    "end": ("string", "The end, an RFC 3339 date-time with an offset."),
    "attendees": ({"type": "array", "items": {"type": "string"}},
                  "The attendees' email addresses."),
    "time_min": ("string", "Only events ending after this RFC 3339 date-time."),
    "time_max": ("string", "Only events starting before this RFC 3339 date-time."),
    "location": ("string", "Where the event takes place, as free text or an address."),
}

READS = ("get_", "list_", "search_", "read_", "describe_", "explain_", "query", "directory_",
         "screenshot")
REPO = ["owner", "repo"]
# (name, description, required parameters, optional parameters)
TOOLS: list[tuple[str, str, list[str], list[str]]] = [
    ("create_issue", "Create a new issue in a GitHub repository. Use it to report bugs or "
     "request features; returns the created issue with its number and URL.",
     [*REPO, "title"], ["body", "labels", "assignees"]),
    ("get_issue", "Get the details of an issue in a GitHub repository: its state, labels, "
     "assignees, body and comment count.", [*REPO, "issue_number"], []),
    ("list_issues", "List the issues of a GitHub repository, filtered by state and labels, "
     "sorted as asked. Pull requests are not included.", REPO,
     ["state", "labels", "sort", "order", "page", "per_page"]),
    ("update_issue", "Update an issue in a GitHub repository: its title, body, state, labels or "
     "assignees. Fields not given are left as they are.", [*REPO, "issue_number"],
     ["title", "body", "state", "labels", "assignees"]),
    ("add_issue_comment", "Add a comment to an issue or a pull request in a GitHub repository.",
     [*REPO, "issue_number", "body"], []),
    ("search_issues", "Search issues and pull requests across GitHub with the issue search "
     "syntax (is:open label:bug repo:owner/name).", ["query"], ["sort", "order", "page",
                                                                 "per_page"]),
    ("create_pull_request", "Create a new pull request in a GitHub repository from a head branch "
     "into a base branch.", [*REPO, "title", "head", "base"], ["body", "draft"]),
    ("get_pull_request", "Get the details of a pull request: its branches, state, mergeability, "
     "reviews requested and the number of changed files.", [*REPO, "pull_number"], []),
    ("list_pull_requests", "List the pull requests of a GitHub repository, filtered by state, "
     "head and base branch.", REPO, ["state", "head", "base", "sort", "order", "page",
                                     "per_page"]),
    ("merge_pull_request", "Merge a pull request with the given method; fails when it is not "
     "mergeable (conflicts, required checks).", [*REPO, "pull_number"],
     ["merge_method", "title", "message"]),
    ("get_file_contents", "Get the contents of a file or a directory listing from a GitHub "
     "repository at a branch.", [*REPO, "path"], ["branch"]),
    ("create_or_update_file", "Create or update a single file in a GitHub repository with a "
     "commit; updating needs the SHA of the file being replaced.",
     [*REPO, "path", "content", "message", "branch"], ["sha"]),
    ("search_code", "Search code across GitHub repositories with the code search syntax "
     "(language:python repo:owner/name).", ["query"], ["page", "per_page"]),
    ("list_commits", "List the commits of a branch in a GitHub repository, newest first.", REPO,
     ["branch", "page", "per_page"]),
    ("create_branch", "Create a new branch in a GitHub repository from an existing one.",
     [*REPO, "branch"], ["from_branch"]),
    ("read_file", "Read the complete contents of a file from the file system. Handles various "
     "text encodings; fails when the path is outside the allowed directories.", ["path"], []),
    ("read_multiple_files", "Read the contents of several files at once; a file that cannot be "
     "read is reported without stopping the others.", ["paths"], []),
    ("write_file", "Create a new file or overwrite an existing one with new content. Use with "
     "care: an existing file is replaced without warning.", ["path", "content"], []),
    ("edit_file", "Make line-based edits to a text file: each edit replaces an exact text. "
     "Returns a git-style diff of the changes.", ["path", "edits"], ["dry_run"]),
    ("create_directory", "Create a new directory, or make sure it exists, parents included.",
     ["path"], []),
    ("list_directory", "List the files and directories in a path, each marked [FILE] or [DIR].",
     ["path"], []),
    ("directory_tree", "Get a recursive tree of files and directories as JSON, each entry with "
     "its name, type and children.", ["path"], ["exclude_patterns"]),
    ("move_file", "Move or rename a file or directory; fails when the destination exists.",
     ["source", "destination"], []),
    ("search_files", "Search for files and directories whose names match a pattern, recursively "
     "from a starting path.", ["path", "pattern"], ["exclude_patterns"]),
    ("get_file_info", "Get metadata about a file or directory: size, times, type, permissions.",
     ["path"], []),
    ("list_allowed_directories", "List the directories this server is allowed to access.", [],
     []),
    ("query", "Run a read-only SQL query against the PostgreSQL database and return the rows as "
     "JSON. Statements that write are refused.", ["sql"], []),
    ("list_tables", "List the tables of a schema with their estimated row counts.", [],
     ["schema"]),
    ("describe_table", "Describe a table: its columns with their types, defaults and "
     "nullability, its indexes and its foreign keys.", ["table"], ["schema"]),
    ("list_schemas", "List the schemas of the database the connection may read.", [], []),
    ("explain_query", "Show the query plan PostgreSQL picks for a SQL query, without running it.",
     ["sql"], []),
    ("list_channels", "List the public channels of the Slack workspace, with their topics and "
     "member counts.", [], ["limit", "cursor"]),
    ("post_message", "Post a new message to a Slack channel as the bot.", ["channel_id", "text"],
     []),
    ("reply_to_thread", "Reply to a thread of messages in a Slack channel.",
     ["channel_id", "thread_ts", "text"], []),
    ("add_reaction", "Add an emoji reaction to a message in a Slack channel.",
     ["channel_id", "thread_ts", "reaction"], []),
    ("get_channel_history", "Get the recent messages of a Slack channel, newest first.",
     ["channel_id"], ["limit", "cursor"]),
    ("get_thread_replies", "Get all the replies in a thread of a Slack channel.",
     ["channel_id", "thread_ts"], []),
    ("get_users", "List the users of the Slack workspace with their basic profiles.", [],
     ["limit", "cursor"]),
    ("get_user_profile", "Get the detailed profile of a Slack user.", ["user_id"], []),
    ("create_ticket", "Create a new Jira ticket in a project.", ["project_key", "summary",
                                                                  "issue_type"],
     ["description", "priority", "assignee", "labels"]),
    ("get_ticket", "Get a Jira ticket with its fields, status, comments and links.",
     ["issue_key"], []),
    ("search_tickets", "Search Jira tickets with a JQL query.", ["jql"], ["limit", "cursor"]),
    ("transition_ticket", "Move a Jira ticket through its workflow (for example to Done).",
     ["issue_key", "transition"], ["comment"]),
    ("add_comment", "Add a comment to a Jira ticket.", ["issue_key", "comment"], []),
    ("list_projects", "List the Jira projects the account can see.", [], ["limit"]),
    ("assign_ticket", "Assign a Jira ticket to a person, or unassign it.", ["issue_key"],
     ["assignee"]),
    ("navigate", "Navigate the browser to a URL and wait until the page has loaded.", ["url"], []),
    ("click", "Click an element of the page, found by a selector.", ["selector", "element"], []),
    ("type", "Type text into an editable element of the page.", ["selector", "element", "value"],
     ["submit"]),
    ("screenshot", "Take a screenshot of the current page or of one element.", [],
     ["selector", "full_page"]),
    ("evaluate", "Evaluate a JavaScript expression in the page and return its JSON value.",
     ["script"], []),
    ("fill_form", "Fill several fields of a form at once.", ["fields"], ["submit"]),
    ("wait_for", "Wait for a number of seconds, or until an element appears.", [],
     ["selector", "seconds"]),
    ("list_events", "List the events of a calendar between two times, in order.",
     ["calendar_id"], ["time_min", "time_max", "limit", "query"]),
    ("create_event", "Create a calendar event and invite its attendees.",
     ["calendar_id", "summary", "start", "end"], ["description", "location", "attendees"]),
    ("update_event", "Update a calendar event; fields not given stay as they are.",
     ["calendar_id", "event_id"], ["summary", "start", "end", "description", "location",
                                   "attendees"]),
    ("delete_event", "Delete a calendar event and tell its attendees.", ["calendar_id",
                                                                         "event_id"], []),
]


def schema(required: list[str], optional: list[str]) -> dict[str, Any]:
    props = {}
    for name in [*required, *optional]:
        kind, text = PARAMS[name]
        props[name] = {**(kind if isinstance(kind, dict) else {"type": kind}), "description": text}
    return {"type": "object", "properties": props, "required": required}


class WideServer(MCPServer):
    async def list_tools(self) -> list[MCPTool]:
        return [MCPTool(name=name, description=text, input_schema=schema(req, opt),
                        annotations=ToolAnnotations(read_only_hint=name.startswith(READS),
                                                    open_world_hint=True))
                for name, text, req, opt in TOOLS]

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Any = None) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text",
                                                   text=f"{name} {json.dumps(arguments)}")])


if __name__ == "__main__":
    WideServer("wide").run("stdio")
