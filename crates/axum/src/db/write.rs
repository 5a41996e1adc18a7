//! A route's own row writes that travel with a claim's statements: the first row created
//! with the claim ([`RouteInsert`], [`Db::begin_with`](super::Db::begin_with)) and the
//! business writes carried by the fenced commit ([`RouteWrite`]: updates and inserts,
//! [`Db::finish_with`](super::Db::finish_with)); on PostgreSQL each is one statement with
//! idem's own, gated on the claim (`… SELECT … FROM idem`, `… AND EXISTS (SELECT 1 FROM
//! idem)`), which these types add themselves so a route cannot forget it.
//!
//! A route names its table and columns and hands its values; it writes no SQL. Names are
//! checked as plain identifiers (letters, digits and `_`, not starting with a digit; a table
//! may be `schema.table`) when the statement is composed, and a name that is not one is
//! [`DbError::InvalidWrite`](super::DbError::InvalidWrite), never text in a statement. Values
//! only ever travel as bound parameters.

use super::DbError;

/// A value bound to one column of a [`RouteInsert`] or a [`RouteUpdate`]. Built from the
/// Rust value with `From`: `i64`, `&str`, `Option<&str>`, `&[u8]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param<'a> {
    /// A `BIGINT` / `INTEGER`.
    Int(i64),
    /// A `TEXT`.
    Text(&'a str),
    /// A `TEXT` that may be `NULL`.
    OptionalText(Option<&'a str>),
    /// A `BYTEA` / `BLOB`.
    Bytes(&'a [u8]),
}

impl From<i64> for Param<'_> {
    fn from(v: i64) -> Self {
        Self::Int(v)
    }
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(v: &'a str) -> Self {
        Self::Text(v)
    }
}

impl<'a> From<&'a String> for Param<'a> {
    fn from(v: &'a String) -> Self {
        Self::Text(v)
    }
}

impl<'a> From<Option<&'a str>> for Param<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Self::OptionalText(v)
    }
}

impl<'a> From<&'a [u8]> for Param<'a> {
    fn from(v: &'a [u8]) -> Self {
        Self::Bytes(v)
    }
}

/// A route's first row, created with its claim by [`Db::begin_with`](super::Db::begin_with)
/// (or in an open claim's transaction by [`ClaimTx::create`](super::ClaimTx::create)). Its
/// integer id column (a `BIGSERIAL`, an `INTEGER PRIMARY KEY`; `id` unless
/// [`returning`](Self::returning) names another) becomes the claim's recovery point, so every
/// later worker of the same request resumes this row.
///
/// ```
/// use idem_axum::db::RouteInsert;
///
/// let order = RouteInsert::new("orders")
///     .value("scope", "tenant-a")
///     .value("cart", "cart-1")
///     .value("amount", 4200)
///     .value("status", "pending");
/// # let _ = order;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteInsert<'a> {
    table: &'static str,
    columns: Vec<&'static str>,
    values: Vec<Param<'a>>,
    id: &'static str,
}

impl<'a> RouteInsert<'a> {
    /// A row of `table`, with no column yet.
    pub fn new(table: &'static str) -> Self {
        Self {
            table,
            columns: Vec::new(),
            values: Vec::new(),
            id: "id",
        }
    }

    /// `column` set to `value`.
    #[must_use]
    pub fn value(mut self, column: &'static str, value: impl Into<Param<'a>>) -> Self {
        self.columns.push(column);
        self.values.push(value.into());
        self
    }

    /// The integer column whose value is the recovery point (`id` by default).
    #[must_use]
    pub fn returning(mut self, id: &'static str) -> Self {
        self.id = id;
        self
    }

    /// The recovery point of the row `id`: its decimal digits. The one-statement claim on
    /// PostgreSQL writes the same bytes in SQL, `convert_to(CAST(id AS TEXT), 'UTF8')`.
    pub fn point(id: i64) -> Vec<u8> {
        id.to_string().into_bytes()
    }

    /// The row a recovery point names, if it is one [`point`](Self::point) wrote.
    pub fn id_of(point: &[u8]) -> Option<i64> {
        std::str::from_utf8(point).ok()?.parse().ok()
    }

    /// What the statement's text depends on (the values are bound, not written).
    pub(crate) fn shape(&self, statement: &'static str) -> Shape {
        Shape {
            statement,
            table: self.table,
            columns: self.columns.clone(),
            filters: Vec::new(),
            id: self.id,
        }
    }

    /// The values, bound `$1`, `$2`, … in column order.
    pub(crate) fn params(&self) -> &[Param<'a>] {
        &self.values
    }

    /// The checked parts the statements are composed from: table, column list, `$1, …, $k`,
    /// id column.
    pub(crate) fn parts(&self) -> Result<InsertParts<'_>, DbError> {
        if self.columns.is_empty() {
            return Err(DbError::InvalidWrite(format!(
                "an insert into {:?} names no column",
                self.table
            )));
        }
        for name in self.columns.iter().chain([&self.id]) {
            identifier(name)?;
        }
        Ok(InsertParts {
            table: table_name(self.table)?,
            columns: self.columns.join(", "),
            placeholders: placeholders(1, self.columns.len()),
            id: self.id,
        })
    }

    /// `INSERT INTO <table> (…)` and then `VALUES (…)` (`gated`: `SELECT … FROM idem`, so
    /// the row exists only if the fenced part of the same statement wrote one), its values
    /// bound from `$first`.
    pub(crate) fn sql_from(&self, first: usize, gated: bool) -> Result<String, DbError> {
        let p = self.parts()?;
        let values = placeholders(first, self.columns.len());
        Ok(if gated {
            format!(
                "INSERT INTO {} ({}) SELECT {values} FROM idem RETURNING 1",
                p.table, p.columns
            )
        } else {
            format!("INSERT INTO {} ({}) VALUES ({values})", p.table, p.columns)
        })
    }

    /// `INSERT … RETURNING <id>`, alone (in an open claim transaction).
    pub(crate) fn plain_sql(&self) -> Result<String, DbError> {
        let p = self.parts()?;
        Ok(format!(
            "INSERT INTO {} ({}) VALUES ({}) RETURNING {}",
            p.table, p.columns, p.placeholders, p.id
        ))
    }
}

/// A [`RouteInsert`]'s statement parts, each checked.
pub(crate) struct InsertParts<'i> {
    pub(crate) table: &'static str,
    pub(crate) columns: String,
    /// `$1, $2, …`, one per column.
    pub(crate) placeholders: String,
    pub(crate) id: &'i str,
}

/// A route's one business update, carried by the fenced commit
/// ([`Db::finish_with`](super::Db::finish_with)): `UPDATE <table> SET <column> = <value>, …
/// WHERE <column> = <value> AND …`. At least one [`set`](Self::set) and one
/// [`filter`](Self::filter): an update of every row is refused, not run.
///
/// ```
/// use idem_axum::db::RouteUpdate;
///
/// let paid = RouteUpdate::new("orders")
///     .set("status", "paid")
///     .set("charge_id", Some("ch_1"))
///     .filter("id", 7);
/// # let _ = paid;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteUpdate<'a> {
    table: &'static str,
    sets: Vec<&'static str>,
    filters: Vec<&'static str>,
    /// The sets' values, then the filters'.
    set_values: Vec<Param<'a>>,
    filter_values: Vec<Param<'a>>,
}

impl<'a> RouteUpdate<'a> {
    /// An update of `table`, with nothing set yet.
    pub fn new(table: &'static str) -> Self {
        Self {
            table,
            sets: Vec::new(),
            filters: Vec::new(),
            set_values: Vec::new(),
            filter_values: Vec::new(),
        }
    }

    /// `column = value` in the `SET` list.
    #[must_use]
    pub fn set(mut self, column: &'static str, value: impl Into<Param<'a>>) -> Self {
        self.sets.push(column);
        self.set_values.push(value.into());
        self
    }

    /// `column = value` in the `WHERE` condition (all of them must hold).
    #[must_use]
    pub fn filter(mut self, column: &'static str, value: impl Into<Param<'a>>) -> Self {
        self.filters.push(column);
        self.filter_values.push(value.into());
        self
    }

    /// What the statement's text depends on (the values are bound, not written).
    pub(crate) fn shape(&self, statement: &'static str) -> Shape {
        Shape {
            statement,
            table: self.table,
            columns: self.sets.clone(),
            filters: self.filters.clone(),
            id: "",
        }
    }

    /// The values, bound `$1`, `$2`, … : the sets', then the filters'.
    pub(crate) fn params(&self) -> impl Iterator<Item = &Param<'a>> {
        self.set_values.iter().chain(&self.filter_values)
    }

    /// How many values [`params`](Self::params) binds.
    pub(crate) fn param_count(&self) -> usize {
        self.set_values.len() + self.filter_values.len()
    }

    /// `UPDATE <table> SET … WHERE (…)`, its values bound from `$first`, the condition in
    /// parentheses so a caller may add `AND <fence>` (PostgreSQL); SQLite runs it as it is.
    pub(crate) fn sql_from(&self, first: usize) -> Result<String, DbError> {
        if self.sets.is_empty() || self.filters.is_empty() {
            return Err(DbError::InvalidWrite(format!(
                "an update of {:?} needs at least one column set and one filter",
                self.table
            )));
        }
        let table = table_name(self.table)?;
        let mut n = first - 1;
        let mut assign = |name: &&'static str| -> Result<String, DbError> {
            n += 1;
            Ok(format!("{} = ${n}", identifier(name)?))
        };
        let sets: Vec<String> = self
            .sets
            .iter()
            .map(&mut assign)
            .collect::<Result<_, _>>()?;
        let filters: Vec<String> = self
            .filters
            .iter()
            .map(&mut assign)
            .collect::<Result<_, _>>()?;
        Ok(format!(
            "UPDATE {table} SET {} WHERE ({})",
            sets.join(", "),
            filters.join(" AND ")
        ))
    }
}

/// One of a route's business writes carried by the fenced commit
/// ([`Db::finish_with`](super::Db::finish_with)): all of them happen with the commit, or,
/// if the claim was lost, none does. Built with `From` (or `.into()`) from a
/// [`RouteUpdate`] or a [`RouteInsert`] (whose id column is not read here).
///
/// ```
/// use idem_axum::db::{RouteInsert, RouteUpdate, RouteWrite};
///
/// // The order paid and a message for the outbox, with the saved answer.
/// let writes: [RouteWrite; 2] = [
///     RouteUpdate::new("orders").set("status", "paid").filter("id", 7).into(),
///     RouteInsert::new("outbox").value("message_id", "order-7-paid").into(),
/// ];
/// # let _ = writes;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteWrite<'a> {
    /// An update of the route's rows.
    Update(RouteUpdate<'a>),
    /// A row the route adds.
    Insert(RouteInsert<'a>),
}

impl<'a> From<RouteUpdate<'a>> for RouteWrite<'a> {
    fn from(update: RouteUpdate<'a>) -> Self {
        Self::Update(update)
    }
}

impl<'a> From<RouteInsert<'a>> for RouteWrite<'a> {
    fn from(insert: RouteInsert<'a>) -> Self {
        Self::Insert(insert)
    }
}

impl<'a> RouteWrite<'a> {
    /// What the statement's text depends on.
    pub(crate) fn shape(&self, statement: &'static str) -> Shape {
        match self {
            Self::Update(update) => update.shape(statement),
            Self::Insert(insert) => insert.shape(statement),
        }
    }

    /// The values, bound in order from the write's first placeholder.
    pub(crate) fn params(&self) -> Box<dyn Iterator<Item = &Param<'a>> + '_> {
        match self {
            Self::Update(update) => Box::new(update.params()),
            Self::Insert(insert) => Box::new(insert.params().iter()),
        }
    }

    /// How many values [`params`](Self::params) binds.
    pub(crate) fn param_count(&self) -> usize {
        match self {
            Self::Update(update) => update.param_count(),
            Self::Insert(insert) => insert.params().len(),
        }
    }

    /// The write's statement, values bound from `$first`. `gated` (PostgreSQL, inside the
    /// commit's `WITH`): it changes nothing unless the fenced part wrote a row, and returns
    /// a row per row written.
    pub(crate) fn sql_from(&self, first: usize, gated: bool) -> Result<String, DbError> {
        match self {
            Self::Update(update) if gated => Ok(format!(
                "{} AND EXISTS (SELECT 1 FROM idem) RETURNING 1",
                update.sql_from(first)?
            )),
            Self::Update(update) => update.sql_from(first),
            Self::Insert(insert) => insert.sql_from(first, gated),
        }
    }
}

/// `$first, $first+1, …`, `count` of them.
pub(crate) fn placeholders(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `name` if it is a plain SQL identifier, written as it is without quoting on both backends.
fn identifier(name: &'static str) -> Result<&'static str, DbError> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        Ok(name)
    } else {
        Err(DbError::InvalidWrite(format!(
            "{name:?} is not a plain SQL identifier (letters, digits, _)"
        )))
    }
}

/// A table name: an identifier, or `schema.table`.
fn table_name(name: &'static str) -> Result<&'static str, DbError> {
    match name.split_once('.') {
        Some((schema, table)) => {
            // Both halves are checked; each is a sub-slice of the 'static name.
            identifier(schema).and(identifier(table)).map(|_| name)
        }
        None => identifier(name),
    }
}

/// What a composed statement's text depends on: which statement and the route's names
/// (its values are bound, so they are not part of it; their count follows from the names).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    pub(crate) statement: &'static str,
    pub(crate) table: &'static str,
    /// The inserted or set columns.
    pub(crate) columns: Vec<&'static str>,
    /// An update's filter columns.
    pub(crate) filters: Vec<&'static str>,
    /// An insert's id column.
    pub(crate) id: &'static str,
}

/// Bind every [`Param`] of `$params`, in order, onto `$query` (either backend's).
macro_rules! bind_params {
    ($query:expr, $params:expr) => {{
        let mut query = $query;
        for param in $params {
            query = match *param {
                $crate::db::Param::Int(v) => query.bind(v),
                $crate::db::Param::Text(v) => query.bind(v),
                $crate::db::Param::OptionalText(v) => query.bind(v),
                $crate::db::Param::Bytes(v) => query.bind(v),
            };
        }
        query
    }};
}

pub(crate) use bind_params;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_insert_names_its_columns_and_binds_its_values_in_order() {
        let insert = RouteInsert::new("shop.orders")
            .value("scope", "a")
            .value("amount", 4200)
            .returning("order_id");
        assert_eq!(
            insert.plain_sql().unwrap(),
            "INSERT INTO shop.orders (scope, amount) VALUES ($1, $2) RETURNING order_id"
        );
        assert_eq!(insert.params(), &[Param::Text("a"), Param::Int(4200)]);
    }

    #[test]
    fn an_update_numbers_its_sets_then_its_filters() {
        let update = RouteUpdate::new("orders")
            .set("status", "paid")
            .set("charge_id", None::<&str>)
            .filter("id", 7)
            .filter("scope", "a");
        assert_eq!(
            update.sql_from(1).unwrap(),
            "UPDATE orders SET status = $1, charge_id = $2 WHERE (id = $3 AND scope = $4)"
        );
        let params: Vec<_> = update.params().copied().collect();
        assert_eq!(
            params,
            [
                Param::Text("paid"),
                Param::OptionalText(None),
                Param::Int(7),
                Param::Text("a")
            ]
        );
        assert_eq!(update.param_count(), 4);
    }

    #[test]
    fn a_name_that_is_not_an_identifier_is_refused_not_written() {
        let refused = |e: Result<String, DbError>| matches!(e, Err(DbError::InvalidWrite(_)));
        for table in [
            "orders; DROP TABLE x",
            "",
            "1orders",
            "a.b.c",
            "or ders",
            "\"o\"",
        ] {
            assert!(
                refused(RouteInsert::new(table).value("a", 1).plain_sql()),
                "{table}"
            );
            assert!(
                refused(
                    RouteUpdate::new(table)
                        .set("a", 1)
                        .filter("b", 2)
                        .sql_from(1)
                ),
                "{table}"
            );
        }
        assert!(refused(
            RouteInsert::new("t").value("a = 1 --", 1).plain_sql()
        ));
        assert!(refused(
            RouteInsert::new("t")
                .value("a", 1)
                .returning("id)")
                .plain_sql()
        ));
        assert!(refused(
            RouteUpdate::new("t")
                .set("a", 1)
                .filter("b OR 1", 2)
                .sql_from(1)
        ));
    }

    #[test]
    fn writes_number_their_values_from_where_they_start_and_gate_on_the_claim() {
        let paid: RouteWrite = RouteUpdate::new("orders")
            .set("status", "paid")
            .filter("id", 7)
            .into();
        let message: RouteWrite = RouteInsert::new("outbox")
            .value("message_id", "m")
            .value("order_id", 7)
            .into();
        assert_eq!(
            paid.sql_from(3, true).unwrap(),
            "UPDATE orders SET status = $3 WHERE (id = $4) AND EXISTS (SELECT 1 FROM idem) \
             RETURNING 1"
        );
        assert_eq!(
            message.sql_from(5, true).unwrap(),
            "INSERT INTO outbox (message_id, order_id) SELECT $5, $6 FROM idem RETURNING 1"
        );
        assert_eq!(
            message.sql_from(1, false).unwrap(),
            "INSERT INTO outbox (message_id, order_id) VALUES ($1, $2)"
        );
        assert_eq!((paid.param_count(), message.param_count()), (2, 2));
        let params: Vec<_> = message.params().copied().collect();
        assert_eq!(params, [Param::Text("m"), Param::Int(7)]);
        let refused = RouteWrite::from(RouteInsert::new("outbox; --").value("a", 1));
        assert!(matches!(
            refused.sql_from(1, true),
            Err(DbError::InvalidWrite(_))
        ));
    }

    #[test]
    fn an_update_of_every_row_or_of_nothing_is_refused() {
        let refused = |e: Result<String, DbError>| matches!(e, Err(DbError::InvalidWrite(_)));
        assert!(refused(RouteUpdate::new("t").set("a", 1).sql_from(1)));
        assert!(refused(RouteUpdate::new("t").filter("a", 1).sql_from(1)));
        assert!(refused(RouteInsert::new("t").plain_sql()));
    }
}
