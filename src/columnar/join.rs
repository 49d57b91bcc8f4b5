//! Table plumbing of the golden-dataset job, shared by the CLI's `score`, the Python functions
//! (`collapse_run`, `join_golden`) and Rust users: a long (TREC-style) run collapsed into one row
//! per query, and the golden ⋈ run left join with what it found (questions without an answer,
//! run rows without a question, ids that occur twice). Eager and on Polars' core types only, so
//! the Python plugin (which has no lazy engine) runs the same code as the CLI.
//!
//! Decisions where earlier copies differed:
//! * A long run's items are put in `rank` order within each query (a stable sort: ties and
//!   rows without `rank` keep their row order; a null rank sorts first, as Polars sorts), and
//!   queries keep the order of their first row.
//! * Run columns that the golden table also has get a `_run` suffix; `in_run` says whether a
//!   golden row found a run row.
//! * Ids must have the same dtype on both sides, except integers of different widths, which join
//!   as `i64` (an error names the id that does not fit).
//! * Every run row is accounted for: joined, or reported in `unknown` (a null id joins nothing).
//!
//! ```
//! use polars::prelude::*;
//! use polars_rag::columnar::join::{collapse_run, join_golden};
//! let golden = df!("query_id" => ["q1", "q2"]).unwrap();
//! let run = df!("query_id" => ["q1", "q1", "zz"], "doc_id" => ["c", "a", "b"], "rank" => [2, 1, 1]).unwrap();
//! let collapsed = collapse_run(&run, "query_id").unwrap();
//! assert_eq!(collapsed.height(), 2);
//! let joined = join_golden(&golden, &run, "query_id").unwrap();
//! assert_eq!(joined.frame.height(), 2);
//! assert_eq!(joined.missing.str().unwrap().get(0), Some("q2"));
//! assert_eq!(joined.unknown.str().unwrap().get(0), Some("zz"));
//! ```

use polars::prelude::*;
use polars_arrow::array::ListArray;
use polars_arrow::offset::OffsetsBuffer;

/// Item columns of a long run (one row per retrieved item), as the fields of its `retrieved`
/// structs.
pub const LONG_RUN_FIELDS: [(&str, &str); 6] = [
    ("doc_id", "id"),
    ("text", "text"),
    ("file", "file"),
    ("start", "start"),
    ("end", "end"),
    ("score", "score"),
];

/// Whether a run table is long (one row per retrieved item: a `doc_id` column and no list
/// column named `retrieved`).
pub fn is_long_run(schema: &Schema, retrieved: &str) -> bool {
    !schema.contains(retrieved) && schema.contains("doc_id")
}

/// An error of the table layer, naming the table and column.
fn table_error(msg: String) -> PolarsError {
    PolarsError::ComputeError(msg.into())
}

/// The id column of `frame` as strings (ids may be of any type), or an error naming the table.
fn id_keys(frame: &DataFrame, table: &str, id: &str) -> PolarsResult<StringChunked> {
    let column = frame.column(id).map_err(|_| {
        let columns: Vec<&str> = frame
            .get_column_names()
            .iter()
            .map(|n| n.as_str())
            .collect();
        table_error(format!(
            "{table}: no id column '{id}' (columns: {})",
            columns.join(", ")
        ))
    })?;
    // A list, struct or array id would be cast to text and matched as such: refused instead.
    if column.dtype().is_nested() {
        return Err(PolarsError::SchemaMismatch(
            format!(
                "{table}: the id column '{id}' is {}; ids must be strings, integers or categories",
                column.dtype()
            )
            .into(),
        ));
    }
    Ok(column.cast(&DataType::String)?.str()?.clone())
}

/// Collapses a long run (`query_id`, `doc_id` and any of `rank`, `score`, `text`, `file`,
/// `start`, `end`) into one row per query with a `retrieved` list of structs in rank order;
/// other columns keep the value of the query's first item (after ordering by rank).
pub fn collapse_run(run: &DataFrame, id: &str) -> PolarsResult<DataFrame> {
    let keys = id_keys(run, "run", id)?;
    // Queries in the order of their first row; a null id is a query of its own, as in group_by.
    let mut group_of: PlHashMap<Option<&str>, usize> = PlHashMap::default();
    let mut groups: Vec<Vec<IdxSize>> = Vec::new();
    for (row, key) in keys.iter().enumerate() {
        let next = groups.len();
        let g = *group_of.entry(key).or_insert(next);
        if g == next {
            groups.push(Vec::new());
        }
        groups[g].push(row as IdxSize);
    }
    if let Ok(rank) = run.column("rank") {
        let rank = rank.cast(&DataType::Float64)?;
        let rank: Vec<Option<f64>> = rank.f64()?.iter().collect();
        // Nulls first, as Polars sorts; the sort is stable, so ties keep their row order.
        let order = |a: &IdxSize, b: &IdxSize| match (rank[*a as usize], rank[*b as usize]) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (Some(x), Some(y)) => x.total_cmp(&y),
        };
        for items in &mut groups {
            // Runs usually list each query's items by rank already.
            if !items.is_sorted_by(|a, b| order(a, b).is_le()) {
                items.sort_by(order);
            }
        }
    }
    let first: Vec<IdxSize> = groups.iter().map(|items| items[0]).collect();
    let flat: Vec<IdxSize> = groups.iter().flatten().copied().collect();
    // Rows already grouped and in rank order (the usual TREC file) need no gather.
    let in_place = flat.iter().enumerate().all(|(i, &row)| i == row as usize);
    let mut offsets: Vec<i64> = Vec::with_capacity(groups.len() + 1);
    offsets.push(0);
    for items in &groups {
        offsets.push(offsets[offsets.len() - 1] + items.len() as i64);
    }
    let first = IdxCa::from_vec("".into(), first);
    let flat = IdxCa::from_vec("".into(), flat);

    let mut fields = Vec::new();
    for (column, field) in LONG_RUN_FIELDS {
        if let Ok(c) = run.column(column) {
            let values = c.as_materialized_series();
            let values = if in_place {
                values.clone()
            } else {
                values.take(&flat)?
            };
            fields.push(values.with_name(field.into()));
        }
    }
    let items = StructChunked::from_series("retrieved".into(), flat.len(), fields.iter())?
        .into_series()
        .rechunk();
    let item_dtype = items.dtype().clone();
    let values = items.chunks()[0].clone();
    let list = ListArray::<i64>::new(
        ListArray::<i64>::default_datatype(values.dtype().clone()),
        OffsetsBuffer::try_from(offsets)?,
        values,
        None,
    );
    // SAFETY: the chunk is a large list of the struct's own physical array, of the dtype given.
    let retrieved = unsafe {
        ListChunked::from_chunks_and_dtype(
            "retrieved".into(),
            vec![Box::new(list)],
            DataType::List(Box::new(item_dtype)),
        )
    };

    let item_columns: Vec<&str> = LONG_RUN_FIELDS
        .iter()
        .map(|(c, _)| *c)
        .chain(["rank"])
        .collect();
    let mut columns = vec![run.column(id)?.take(&first)?];
    columns.push(retrieved.into_series().into_column());
    for column in run.columns() {
        let name = column.name().as_str();
        if name != id && !item_columns.contains(&name) {
            columns.push(column.take(&first)?);
        }
    }
    DataFrame::new_infer_height(columns)
}

/// A golden table joined with a run, and what the join found.
#[derive(Clone, Debug)]
pub struct GoldenJoin {
    /// One row per golden row and matching run row (a golden row without one is kept once, with
    /// `in_run` false and the run's columns null); golden order, then run order.
    pub frame: DataFrame,
    /// Golden ids with no run row, in golden order.
    pub missing: Series,
    /// Ids of run rows that join no golden row (null ids included), in run order: those rows are
    /// not in `frame`.
    pub unknown: Series,
    /// Ids that occur more than once in the golden table, sorted.
    pub duplicate_golden: Series,
    /// Ids that occur more than once in the run (each row is kept), sorted.
    pub duplicate_run: Series,
}

/// The ids of `frame` that occur more than once, sorted (nulls are not ids).
pub fn duplicate_ids(frame: &DataFrame, table: &str, id: &str) -> PolarsResult<Series> {
    let keys = id_keys(frame, table, id)?;
    let mut seen: PlHashMap<&str, (IdxSize, usize)> = PlHashMap::default();
    for (row, key) in keys.iter().enumerate() {
        if let Some(key) = key {
            seen.entry(key).or_insert((row as IdxSize, 0)).1 += 1;
        }
    }
    let mut rows: Vec<IdxSize> = seen
        .values()
        .filter(|(_, n)| *n > 1)
        .map(|(row, _)| *row)
        .collect();
    rows.sort_unstable();
    let ids = frame
        .column(id)?
        .as_materialized_series()
        .take(&IdxCa::from_vec("".into(), rows))?;
    ids.sort(SortOptions::default())
}

/// Id columns of the same dtype on both sides: integers of different widths as `i64`.
fn common_ids(golden: &mut DataFrame, run: &mut DataFrame, id: &str) -> PolarsResult<()> {
    let (g, r) = (
        golden.column(id)?.dtype().clone(),
        run.column(id)?.dtype().clone(),
    );
    if g == r {
        return Ok(());
    }
    if !(g.is_integer() && r.is_integer()) {
        polars_bail!(SchemaMismatch: "cannot join the run to the golden table: golden column '{id}' has dtype {g} but run column '{id}' has dtype {r}; write both with the same dtype");
    }
    for (table, frame) in [("golden", golden), ("run", run)] {
        let ids = frame
            .column(id)?
            .strict_cast(&DataType::Int64)
            .map_err(|e| {
                table_error(format!(
                    "{table} column '{id}': ids do not fit a 64-bit integer: {e}"
                ))
            })?;
        frame.with_column(ids)?;
    }
    Ok(())
}

/// Joins a run to its golden table (a left join on `id`), collapsing a long run first
/// ([`collapse_run`]), and reports what did not join.
pub fn join_golden(golden: &DataFrame, run: &DataFrame, id: &str) -> PolarsResult<GoldenJoin> {
    let mut golden = golden.clone();
    id_keys(&golden, "golden", id)?;
    let mut run = if is_long_run(run.schema(), "retrieved") {
        collapse_run(run, id)?
    } else {
        id_keys(run, "run", id)?;
        run.clone()
    };
    common_ids(&mut golden, &mut run, id)?;
    let golden_keys = id_keys(&golden, "golden", id)?;
    let run_keys = id_keys(&run, "run", id)?;

    let mut run_rows: PlHashMap<&str, Vec<IdxSize>> = PlHashMap::default();
    for (row, key) in run_keys.iter().enumerate() {
        if let Some(key) = key {
            run_rows.entry(key).or_default().push(row as IdxSize);
        }
    }
    let mut left: Vec<IdxSize> = Vec::with_capacity(golden.height());
    let mut right: Vec<Option<IdxSize>> = Vec::with_capacity(golden.height());
    let mut missing: Vec<IdxSize> = Vec::new();
    for (row, key) in golden_keys.iter().enumerate() {
        match key.and_then(|k| run_rows.get(k)) {
            Some(matches) => {
                for &m in matches {
                    left.push(row as IdxSize);
                    right.push(Some(m));
                }
            }
            None => {
                left.push(row as IdxSize);
                right.push(None);
                missing.push(row as IdxSize);
            }
        }
    }
    let known: PlHashSet<&str> = golden_keys.iter().flatten().collect();
    let unknown: Vec<IdxSize> = run_keys
        .iter()
        .enumerate()
        .filter(|(_, key)| key.is_none_or(|k| !known.contains(k)))
        .map(|(row, _)| row as IdxSize)
        .collect();

    // A run with one row per golden row, in golden order, joins without a gather.
    let left_in_place =
        left.len() == golden.height() && left.iter().enumerate().all(|(i, &r)| r as usize == i);
    let right_in_place = right.len() == run.height()
        && right
            .iter()
            .enumerate()
            .all(|(i, r)| *r == Some(i as IdxSize));
    let in_run: BooleanChunked = right.iter().map(|r| Some(r.is_some())).collect();
    let mut frame = if left_in_place {
        golden.clone()
    } else {
        golden.take(&IdxCa::from_vec("".into(), left))?
    };
    let right: IdxCa = right.into_iter().collect();
    for column in run.columns() {
        if column.name().as_str() == id {
            continue;
        }
        let mut taken = if right_in_place {
            column.clone()
        } else {
            column.take(&right)?
        };
        if frame.schema().contains(column.name()) {
            taken.rename(format!("{}_run", column.name()).into());
        }
        frame.with_column(taken)?;
    }
    frame.with_column(in_run.with_name("in_run".into()).into_column())?;

    let ids_at = |frame: &DataFrame, rows: Vec<IdxSize>| -> PolarsResult<Series> {
        frame
            .column(id)?
            .as_materialized_series()
            .take(&IdxCa::from_vec("".into(), rows))
    };
    Ok(GoldenJoin {
        missing: ids_at(&golden, missing)?,
        unknown: ids_at(&run, unknown)?,
        duplicate_golden: duplicate_ids(&golden, "golden", id)?,
        duplicate_run: duplicate_ids(&run, "run", id)?,
        frame,
    })
}
