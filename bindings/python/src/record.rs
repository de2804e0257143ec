//! Result values as small, frozen, dataclass-like Python classes: one macro, so every result
//! type has the same shape — a keyword/positional constructor, read-only attributes,
//! `__repr__` that reads back as the constructor call, `__eq__`/`__hash__` by value, and
//! `__match_args__` for `match` statements.
//!
//! Fields hold Rust values ([`Field`] says how each type crosses to Python): durations are kept
//! as `Duration` (exact, hashable) and shown as `float` seconds.

use crate::convert::{duration, int, secs, uint};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;
use std::time::Duration;

/// A field type of a record: how it is read from a constructor argument and shown to Python.
pub(crate) trait Field: Sized {
    /// From a constructor argument named `name`.
    fn put(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self>;
    /// The Python value.
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>>;
}

impl Field for u64 {
    fn put(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        uint(obj, name)
    }
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.into_bound_py_any(py)
    }
}

impl Field for i64 {
    fn put(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        int(obj, name)
    }
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.into_bound_py_any(py)
    }
}

impl Field for bool {
    fn put(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<Self> {
        obj.extract()
    }
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(pyo3::types::PyBool::new(py, *self).to_owned().into_any())
    }
}

impl Field for String {
    fn put(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<Self> {
        obj.extract()
    }
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.into_bound_py_any(py)
    }
}

impl Field for Option<String> {
    fn put(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<Self> {
        obj.extract()
    }
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.into_bound_py_any(py)
    }
}

impl Field for Vec<String> {
    fn put(obj: &Bound<'_, PyAny>, _name: &str) -> PyResult<Self> {
        obj.extract()
    }
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.into_bound_py_any(py)
    }
}

impl Field for Duration {
    fn put(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        duration(obj, name)
    }
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        secs(*self).into_bound_py_any(py)
    }
}

/// A frozen result class named `$name` with these fields (and, in braces after them, any
/// further methods of its `#[pymethods]` block).
macro_rules! record {
    (
        $(#[doc = $doc:literal])*
        $name:ident { $($field:ident : $ty:ty),+ $(,)? }
        { $($extra:tt)* }
    ) => {
        $(#[doc = $doc])*
        #[pyclass(frozen, eq, hash, module = "redis_atomic")]
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub struct $name {
            $(pub(crate) $field: $ty),+
        }

        #[pymethods]
        impl $name {
            #[new]
            #[pyo3(signature = ($($field),+))]
            #[allow(clippy::too_many_arguments)]
            fn py_new($($field: &pyo3::Bound<'_, pyo3::PyAny>),+) -> pyo3::PyResult<Self> {
                Ok($name { $($field: <$ty as $crate::record::Field>::put($field, stringify!($field))?),+ })
            }

            $(
                #[getter]
                fn $field<'py>(
                    &self,
                    py: pyo3::Python<'py>,
                ) -> pyo3::PyResult<pyo3::Bound<'py, pyo3::PyAny>> {
                    $crate::record::Field::get(&self.$field, py)
                }
            )+

            #[classattr]
            fn __match_args__(
                py: pyo3::Python<'_>,
            ) -> pyo3::PyResult<pyo3::Bound<'_, pyo3::types::PyTuple>> {
                pyo3::types::PyTuple::new(py, [$(stringify!($field)),+])
            }

            fn __repr__(&self, py: pyo3::Python<'_>) -> pyo3::PyResult<String> {
                use pyo3::types::PyAnyMethods;
                let parts: Vec<String> = vec![$(
                    format!(
                        "{}={}",
                        stringify!($field),
                        $crate::record::Field::get(&self.$field, py)?.repr()?
                    )
                ),+];
                Ok(format!("{}({})", stringify!($name), parts.join(", ")))
            }

            $($extra)*
        }
    };
}

pub(crate) use record;

/// A list of records of type `T` (a field of another record).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct List<T>(pub(crate) Vec<T>);

impl<T> Field for List<T>
where
    T: pyo3::PyClass<Frozen = pyo3::pyclass::boolean_struct::True> + Clone + Sync,
    for<'py> T: IntoPyObject<'py>,
{
    fn put(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Self> {
        obj.try_iter()?
            .map(|item| {
                let item = item?;
                let typed = item.cast::<T>().map_err(|_| {
                    pyo3::exceptions::PyTypeError::new_err(format!(
                        "{name} must hold {} values",
                        std::any::type_name::<T>().rsplit("::").next().unwrap_or("")
                    ))
                })?;
                Ok(typed.get().clone())
            })
            .collect::<PyResult<Vec<T>>>()
            .map(List)
    }
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let items = self
            .0
            .iter()
            .cloned()
            .map(|v| v.into_bound_py_any(py))
            .collect::<PyResult<Vec<_>>>()?;
        pyo3::types::PyList::new(py, items).map(Bound::into_any)
    }
}
